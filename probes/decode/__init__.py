"""What decoding costs: weight reads against memory bandwidth, MoE expert reads, KV-cache steps, the loop, batching."""

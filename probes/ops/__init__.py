"""Two MLX ops on the same inputs: how their times compare and how far one's output is from the other's."""

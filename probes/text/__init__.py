"""What a model's text is worth: cloze accuracy on a shipped data set, repetition and diversity of generations."""

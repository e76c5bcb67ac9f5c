"""The tools an agent may call: schemas, classification and execution."""

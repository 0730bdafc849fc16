"""Inventory in: what drivers publish (ResourceSlices) and the node shapes that publish it."""

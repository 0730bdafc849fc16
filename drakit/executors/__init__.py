"""Where runs execute, behind one seam: the simulator, this machine, (later) a Kubernetes cluster.

An edge package: it may import every core layer and the store; nothing in the core imports it.
The NVML reader lives here too, since it is I/O on the machine the local executor runs on.
"""

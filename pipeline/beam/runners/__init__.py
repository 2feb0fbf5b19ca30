"""Runner support, beside the graph (pipeline/beam/graph.py and its stages know no
runner): which runner a run uses and what it refuses before any work
(locality.py: local paths that workers on other machines cannot reach;
portable.py: a job service that does not answer, a job-server jar that cannot be
had), guarded fixes of Beam's internals (patches.py), and everything a run needs
around Beam for its runner, in one context manager (session.py)."""

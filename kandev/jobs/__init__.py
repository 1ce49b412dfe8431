"""RQ jobs and the worker and scheduler processes that run them."""

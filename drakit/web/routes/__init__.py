"""The REST API's routes, one module per area; each handler is a thin call of a :mod:`drakit.web.views` function."""

"""The multi-person server: an application served to several people at once.

A small core on tornado that any application can use:

- :mod:`~hasbench.serve.tokens`: a private, unguessable link per seat, kept by the first
  browser that opens it.
- :mod:`~hasbench.serve.journal`: JSON Lines written as things happen.
- :mod:`~hasbench.serve.live`: the live channel: each page's state as it changes, actions
  applied once and in a fixed order.
- :mod:`~hasbench.serve.server`: the routes, the pages behind their links, the binding.

and its applications:

- :mod:`~hasbench.serve.episode`: an episode whose humans are played by people, each on
  their own page, with a researcher's live view (``hasbench serve TASKS TASK_ID``).
"""

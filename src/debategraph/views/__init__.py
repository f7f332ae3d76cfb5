"""What people read: a thread's page and its Markdown export, the eval's ``report.html``.

Everything here renders: a stored thread (read through :mod:`debategraph.checkpoints`,
its pattern through the :mod:`~debategraph.registry`) or an eval's figures
(:mod:`debategraph.eval`'s records and report) become a document a person opens. The
modules: ``shell`` (the one shell of every HTML page: escaping, the no-script no-network
policy, inline images), ``thread_page`` (a thread's page), ``thread_parts`` (its turns,
tables and the summary's fields), ``votes`` (the vote after each round, drawn in SVG, and
who flipped), ``thread_file`` (a stored thread's page, read from its database and
written), ``markdown`` (a thread as Markdown, ``export --format md``), ``eval_page``
(``report.html``), ``eval_tables`` (the eval's tables as HTML) and ``eval_files``
(the pages of the threads ``report.html`` links, then the eval's result files with
``report.html``, written into ``--out`` all or none).
Nothing here imports the CLI; the faces call it.
"""

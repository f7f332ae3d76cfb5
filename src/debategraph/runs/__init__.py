"""Runs: one thread's lifecycle, below every face that starts one.

:mod:`~debategraph.runs.thread` (a :class:`~debategraph.runs.thread.Run`: a thread's
graph compiled once; record, drive, pause, complete, read),
:mod:`~debategraph.runs.human` (a human's messages to a thread: interject, stop, the
inbox at a run's end), :mod:`~debategraph.runs.finish` (a finished thread's result and
archive), :mod:`~debategraph.runs.results` (the result's fields),
:mod:`~debategraph.runs.agents` (which model each agent of a run calls, checked before
it starts) and :mod:`~debategraph.runs.endpoints` (each model served where it goes).
The CLI, the eval and any later door call these; none of them imports a face.
"""

"""``debategraph eval``: accuracy and cost of debate setups on a dataset, with honest statistics.

Every question of every mode is a checkpointed thread of the solver debate graph, so an
interrupted eval resumes where it stopped and a rerun of a finished one calls no model.
"""

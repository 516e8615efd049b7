"""Pure statistics for sign-off: paired non-inferiority, McNemar, Holm, power, sequential looks.

Nothing here reads files or starts processes. Every function takes numbers or numpy arrays and
most work along the last axis, so the report (one cell) and the simulation (thousands of
replications at once) run the very same code. Distributions come from scipy (Holm is our own
vectorised numpy, `multiplicity.py`: statsmodels was dropped as a dependency nothing imported).
"""

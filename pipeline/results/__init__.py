"""The result contract: ``result.json`` as typed values, where a cell's files lie, resume."""

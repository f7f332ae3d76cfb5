"""The peers the speed benchmark runs beside debategraph, each the same debate."""

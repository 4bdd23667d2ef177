"""The result files as types: one frozen dataclass per object a run writes, each with its JSON.

- :mod:`~voice.metrics.model.run_results`: the run's and each target's ``results.json`` (:class:`RunResults`,
  :class:`TargetResults`, the open :class:`Settings` record, ``judge_coverage``) and the loader,
  :func:`~voice.metrics.model.run_results.load_results`;
- :mod:`~voice.metrics.model.summary` and :mod:`~voice.metrics.model.blocks`: a target's summary, its
  figures rows and breakdowns, its blocks;
- :mod:`~voice.metrics.model.call_record`: a call (``<call>.metrics.json``, each of ``calls``);
- :mod:`~voice.metrics.model.provenance_record`: where a run's figures came from;
- :mod:`~voice.metrics.model.score_files`: what ``callsim score`` writes;
- :mod:`~voice.metrics.model.jsonio`: the JSON border they all read and write through, and the versions.

Writers build these and write ``to_json()``; readers load them (``from_json``) and read attributes, never
keys: ``dict`` and ``Mapping`` of JSON stay here.  Every key, its unit and meaning: ``docs/results.md``.
"""

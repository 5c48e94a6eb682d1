"""The scripts the CI workflow's steps run (``.github/workflows/claims.yml``), shipped with the package.

A project that copies the workflow gets the logic from its ``pip install``; each step is
``python -m claimcheck.workflow.<step>``, and every one runs anywhere (the tests run the macOS
job's steps on Linux):

- :mod:`~claimcheck.workflow.metal_sanity`: MLX's GPU results against the CPU device on the ops the
  probes use; on disagreement the rest of the job runs on the CPU device (``CLAIMCHECK_DEVICE=cpu``).
- :mod:`~claimcheck.workflow.summary`: the run's verdict table, and every verdict that differs from
  the committed lock, in the job summary, with annotations at the claim files.
- :mod:`~claimcheck.workflow.docs_changed`: the docs gate on the docs a pull request changed, and on
  the docs citing claims whose file, expected verdict or verdict changed.

Outside GitHub Actions (no ``$GITHUB_STEP_SUMMARY``) they print what they would have written.
"""

"""What several benchmarks import and none runs alone: the labelled series of the detection benchmarks
(``detection_series``) and the detectors they are held against (``detection_baselines``: the HUD's rule,
Perfherder's t-test, Otava), the synthetic history of the dashboard's load benchmarks
(``dashboard_history``) and their concurrent clients (``dashboard_concurrent``)."""

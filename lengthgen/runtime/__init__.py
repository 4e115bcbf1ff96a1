"""How a job runs: its log and cost, torch's device and kernels, and the seeding of every draw."""

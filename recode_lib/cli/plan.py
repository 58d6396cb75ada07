"""`recode plan --profile paper --gpus 8 --gpu-memory 80 [--nodes N] [--json OUT]
[--slurm-script F]`: the resource plan.

The argument half of recode_lib.plan: resolves the profile's parameters per notebook
(recode_lib.runner.pipeline.profile_parameters, `--set KEY=VALUE` as in `recode reproduce`), places
every GPU stage on the cluster (recode_lib.plan.ClusterSpec's options), its variants'
stages too (recode_lib.runner.variants: rows "<stem>@<variant>", unless --no-variants), and prints
the
placement table and the compute budget (recode_lib.plan.BudgetOptions' options), and the preflight
of this machine (recode_lib.plan.preflight: a C++ compiler for CodeContests+' testlib checkers), and
whether BigCodeBench's environment is built where a notebook evaluates it
(recode_lib.core.bench_env:
listed, not refused; the evaluation refuses without it outside the smoke profile). Exit 0
when every stage fits and the preflight passes, 2 with the refusal (notebook, stage, numbers;
or the missing package) otherwise; nothing touches a GPU. `--slurm-script FILE` also writes
the batch job that runs the profile on N nodes (recode_lib.plan.ray_job: a Ray cluster over the
allocation, `recode reproduce --nodes N` inside it), with the plan's wall time as its limit.
"""

from __future__ import annotations

from pathlib import Path

from recode_lib.cli import CliError, add_dataclass_arguments, dataclass_from_args
from recode_lib.cli.reproduce import parse_overrides
from recode_lib.core.bench_env import bcb_notebooks, status_line
from recode_lib.plan import BudgetOptions, ClusterSpec, format_budget, format_plan, make_plan
from recode_lib.plan.core import summary
from recode_lib.plan.preflight import checker_preflight
from recode_lib.plan.ray_job import RayJob, check_ray_job, ray_job_script
from recode_lib.runner.pipeline import profile_parameters, variant_parameters

TIME_MARGIN = 1.25  # the job's --time: the plan's wall time x this


def add_arguments(parser) -> None:
    parser.add_argument("--profile", default="paper", help="the profile to plan (default paper)")
    parser.add_argument("--params", default=None, help="a parameter YAML instead of the profile's")
    parser.add_argument(
        "-p",
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a parameter for every notebook that declares it",
    )
    parser.add_argument("--json", default=None, metavar="OUT", help="also write the plan as JSON")
    parser.add_argument(
        "--slurm-script",
        default=None,
        metavar="FILE",
        help="also write the Slurm batch job that runs the profile on --nodes "
        "nodes: a Ray cluster over the allocation, then `recode reproduce` "
        "in it (submit with sbatch; resubmitting resumes)",
    )
    parser.add_argument(
        "--job-hours",
        type=float,
        default=None,
        help="--slurm-script: the job's time limit in hours (default: the "
        "plan's wall time x 1.25; a cluster's cap is often a few days: "
        "resubmit the same job to go on)",
    )
    parser.add_argument("--partition", default=None, help="--slurm-script: #SBATCH --partition")
    parser.add_argument("--account", default=None, help="--slurm-script: #SBATCH --account")
    parser.add_argument(
        "--no-variants",
        action="store_true",
        help="leave out the profile's variants (its `_variants` section, e.g. "
        "the paper's scale_32b: notebook <stem>@<name> rows)",
    )
    add_dataclass_arguments(parser, ClusterSpec)
    add_dataclass_arguments(parser, BudgetOptions)


def run(args) -> int:
    import json

    cluster = dataclass_from_args(ClusterSpec, args)
    budget = dataclass_from_args(BudgetOptions, args)
    params = profile_parameters(args.profile, args.params, parse_overrides(args.set))
    variants = (
        {}
        if args.no_variants
        else variant_parameters(args.profile, args.params, parse_overrides(args.set))
    )
    plan = make_plan(params, cluster, profile=args.profile, budget=budget, variants=variants)
    preflight = checker_preflight(params)  # this machine: a C++ compiler for testlib checkers
    if args.json:
        Path(args.json).write_text(
            json.dumps(plan.to_dict() | {"preflight": preflight}, indent=1) + "\n"
        )
    for line in preflight:
        print(f"preflight refused: {line}")
    if bcb_notebooks(params):  # listed, not refused: the evaluation itself refuses without it
        print(f"{status_line()} [{', '.join(bcb_notebooks(params))}]")
    if not plan.placements:
        print(f"profile {args.profile}: no GPU stage (it runs on CPU); nothing to place")
        if preflight:
            raise CliError(f"{len(preflight)} notebook(s) refused by the preflight (above)")
        return 0
    print(format_plan(plan))
    print()
    print(format_budget(plan))
    if not plan.ok:
        raise CliError(summary(plan))
    if args.slurm_script:
        write_job(args, cluster, plan)
    if preflight:
        raise CliError(f"{len(preflight)} notebook(s) refused by the preflight (above)")
    return 0


def write_job(args, cluster: ClusterSpec, plan) -> None:
    extra = [a for kv in args.set for a in ("-p", kv)]
    if args.params:
        extra += ["--params", args.params]
    try:
        job = RayJob(
            profile=args.profile,
            nodes=cluster.nodes,
            gpus_per_node=cluster.gpus,
            hours=args.job_hours or max(1.0, plan.total_wall_h * TIME_MARGIN),
            partition=args.partition,
            account=args.account,
            extra_args=tuple(extra),
        )
        text = ray_job_script(job)
        check_ray_job(text, job)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    Path(args.slurm_script).write_text(text)
    print(
        f"\nSlurm job for {cluster.nodes} node(s) x {cluster.gpus} GPUs, --time "
        f"{job.hours:,.0f} h (the plan: {plan.total_wall_h:,.0f} h): {args.slurm_script} "
        "(sbatch it; a job that hits its time limit resumes where it stopped when submitted "
        "again)"
    )

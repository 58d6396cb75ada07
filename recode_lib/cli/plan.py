"""`recode plan --profile paper --gpus 8 --gpu-memory 80 [--nodes N] [--json OUT]`: the resource plan.

The argument half of recode_lib.plan: resolves the profile's parameters per notebook
(recode_lib.pipeline.profile_parameters, `--set KEY=VALUE` as in `recode reproduce`), places
every GPU stage on the cluster (recode_lib.plan.ClusterSpec's options), its variants'
stages too (recode_lib.variants: rows "<stem>@<variant>", unless --no-variants), and prints the placement
table and the compute budget (recode_lib.plan.BudgetOptions' options), and the preflight of this
machine (recode_lib.plan.preflight: a C++ compiler for CodeContests+' testlib checkers). Exit 0
when every stage fits and the preflight passes, 2 with the refusal (notebook, stage, numbers;
or the missing package) otherwise; nothing touches a GPU.
"""

from __future__ import annotations

from recode_lib.cli import CliError, add_dataclass_arguments, dataclass_from_args
from recode_lib.cli.reproduce import parse_overrides
from recode_lib.pipeline import profile_parameters, variant_parameters
from recode_lib.plan import BudgetOptions, ClusterSpec, format_budget, format_plan, make_plan
from recode_lib.plan.core import summary
from recode_lib.plan.preflight import checker_preflight


def add_arguments(parser) -> None:
    parser.add_argument("--profile", default="paper", help="the profile to plan (default paper)")
    parser.add_argument("--params", default=None, help="a parameter YAML instead of the profile's")
    parser.add_argument("-p", "--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a parameter for every notebook that declares it")
    parser.add_argument("--json", default=None, metavar="OUT", help="also write the plan as JSON")
    parser.add_argument("--no-variants", action="store_true",
                        help="leave out the profile's variants (its `_variants` section, e.g. "
                             "the paper's scale_32b: notebook <stem>@<name> rows)")
    add_dataclass_arguments(parser, ClusterSpec)
    add_dataclass_arguments(parser, BudgetOptions)


def run(args) -> int:
    import json
    from pathlib import Path

    cluster = dataclass_from_args(ClusterSpec, args)
    budget = dataclass_from_args(BudgetOptions, args)
    params = profile_parameters(args.profile, args.params, parse_overrides(args.set))
    variants = {} if args.no_variants else variant_parameters(args.profile, args.params,
                                                               parse_overrides(args.set))
    plan = make_plan(params, cluster, profile=args.profile, budget=budget, variants=variants)
    preflight = checker_preflight(params)      # this machine: a C++ compiler for testlib checkers
    if args.json:
        Path(args.json).write_text(json.dumps(plan.to_dict() | {"preflight": preflight},
                                              indent=1) + "\n")
    for line in preflight:
        print(f"preflight refused: {line}")
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
    if preflight:
        raise CliError(f"{len(preflight)} notebook(s) refused by the preflight (above)")
    return 0

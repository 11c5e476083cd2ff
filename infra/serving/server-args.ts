// Reading model-server command-line flags (vLLM and the llm-d simulator share the `--flag value` / `--flag=value` style).

/** The value of `--flag`, in either `--flag=value` or `--flag value` form; the last occurrence wins, as in argparse. */
export function flagValue(args: readonly string[], flag: string): string | undefined {
  let value: string | undefined;
  args.forEach((arg, i) => {
    if (arg.startsWith(`${flag}=`)) value = arg.slice(flag.length + 1);
    else if (arg === flag && i + 1 < args.length) value = args[i + 1];
  });
  return value;
}

/** True when the flag is present, with or without a value. */
export function hasFlag(args: readonly string[], flag: string): boolean {
  return args.some((a) => a === flag || a.startsWith(`${flag}=`));
}

/** A flag's value as a number, undefined when absent; NaN when present but not a number (callers report it). */
export function numericFlag(args: readonly string[], flag: string): number | undefined {
  const v = flagValue(args, flag);
  return v === undefined ? undefined : Number(v);
}

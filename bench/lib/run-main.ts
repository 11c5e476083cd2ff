/** Runs a benchmark's main: a failure prints its stack and exits 1, so `npm run bench…` reports it. */
export function runMain(main: () => Promise<void>): void {
  main().catch((err: Error) => {
    process.stderr.write(`${err.stack ?? err.message}\n`);
    process.exit(1);
  });
}

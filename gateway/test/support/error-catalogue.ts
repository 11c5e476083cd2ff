import { errors, type ApiError } from "../../src/api/errors";

/**
 * Every factory of the error catalogue called with placeholder arguments (`args`): only its status and code matter to
 * the tests that list them. Factories whose arguments must be real values get real ones.
 */
export function catalogueSamples(...args: unknown[]): ApiError[] {
  return Object.entries(errors).map(([name, make]) => {
    if (name === "invalidRequest") return errors.invalidRequest(String(args[0] ?? "m"));
    if (name === "budgetExceeded") return errors.budgetExceeded("m", "tokens", 1, "day", "2026-01-01", new Date(0), 1);
    return (make as (...a: unknown[]) => ApiError)(...args);
  });
}

// How long `pulumi up` waits for a model server, from its volume size.
import { awaitAnnotations, quantityGiB, startupTimeoutSeconds } from "./startup";

describe("startup waits", () => {
  test.each([
    ["20Gi", 20],
    ["140G", 140e9 / 2 ** 30],
    ["5Mi", 5 / 1024],
    ["1Ti", 1024],
    [2 ** 31, 2],
  ] as const)("%s is %d GiB", (q, gib) => expect(quantityGiB(q)).toBeCloseTo(gib, 6));

  test("not a quantity: undefined", () => {
    for (const q of ["20 GiB", "lots", "", "-5Gi"]) expect(quantityGiB(q)).toBeUndefined();
    expect(quantityGiB(undefined)).toBeUndefined();
  });

  test("floor plus an allowance per GiB: a 70B model (140 GiB) gets well over the provider's 10 minutes", () => {
    expect(startupTimeoutSeconds(undefined)).toBe(20 * 60);
    expect(startupTimeoutSeconds(20)).toBe(20 * 60 + 600);
    expect(startupTimeoutSeconds(140)).toBe(20 * 60 + 140 * 30);
    expect(startupTimeoutSeconds(140, { floorMinutes: 30, secondsPerGiB: 10 })).toBe(1800 + 1400);
  });

  test("the annotation pulumi-kubernetes reads, or skip-await", () => {
    expect(awaitAnnotations(20, { floorMinutes: 20, secondsPerGiB: 30 }, true)).toEqual({ "pulumi.com/timeoutSeconds": "1800" });
    expect(awaitAnnotations(20, { floorMinutes: 20, secondsPerGiB: 30 }, false)).toEqual({ "pulumi.com/skipAwait": "true" });
  });
});

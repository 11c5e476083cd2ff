import { KeyedBudget, type BudgetLease } from "../../src/limits/keyed-budget";

const MiB = 1024 * 1024;

describe("body memory budget", () => {
  it("refuses a key over its share and the gateway over its total, and gives bytes back", () => {
    const b = new KeyedBudget(10 * MiB, 4 * MiB);
    const a1 = b.reserve("a", 3 * MiB) as BudgetLease;
    expect(b.reserve("a", 2 * MiB)).toBe("key");
    const b1 = b.reserve("b", 4 * MiB) as BudgetLease;
    const c1 = b.reserve("c", 3 * MiB) as BudgetLease;
    expect(b.reserved).toBe(10 * MiB);
    expect(b.reserve("d", 1)).toBe("gateway"); // nothing is uploading: nothing may be preempted
    a1.resize(MiB);
    expect(b.reservedBy("a")).toBe(MiB);
    a1.release();
    a1.release(); // idempotent
    b1.release();
    c1.release();
    expect(b.reserved).toBe(0);
  });

  it("preempts the oldest upload of the key holding the most for a key holding less", () => {
    const b = new KeyedBudget(8, 4);
    const preempted: string[] = [];
    const lease = (key: string, name: string, bytes: number) => {
      const l = b.reserve(key, bytes) as BudgetLease;
      l.uploading(() => preempted.push(name));
      return l;
    };
    lease("hog", "hog-1", 2);
    lease("hog", "hog-2", 2);
    lease("other", "other-1", 3);
    const done = b.reserve("other", 1) as BudgetLease; // fits exactly
    done.uploaded();
    expect(b.reserved).toBe(8);
    // A third key needs 2: the hog (4) holds more than it would (2), its oldest upload yields.
    expect(b.reserve("new", 2)).not.toBe("gateway");
    expect(preempted).toEqual(["hog-1"]);
    expect(b.reservedBy("hog")).toBe(2);
  });

  it("never preempts a body that has arrived, nor for a key that would hold as much", () => {
    const b = new KeyedBudget(4, 4);
    const l = b.reserve("a", 4) as BudgetLease;
    l.uploading(() => undefined);
    expect(b.reserve("b", 4)).toBe("gateway"); // b would hold 4, a holds 4: not more
    l.uploaded();
    expect(b.reserve("b", 1)).toBe("gateway");
  });
});

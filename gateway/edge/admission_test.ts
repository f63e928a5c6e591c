import assert from "node:assert/strict";
import { Admission, type AdmissionLimits, type Standing } from "./admission.ts";

const GRACE = 1_000;

/** An admission on a clock the test moves, and connections named by strings. */
function setup(limits: Partial<AdmissionLimits> = {}) {
  let now = 0;
  const admission = new Admission<string>({
    maxConnections: 4,
    maxPerAddress: 4,
    highWater: 4,
    graceMs: GRACE,
    ...limits,
  }, () => now);
  let serial = 0;
  return {
    admission,
    tick: (ms: number) => now += ms,
    /** Admits and adds a connection from `group`; answers its name and whom it replaced. */
    open(group: string, standing: Standing = "idle", exempt = false) {
      const decision = admission.admit(group, exempt);
      if (!decision.admitted) return { name: null, evicted: null };
      const name = `${group}#${++serial}`;
      admission.add(name, group, exempt);
      admission.set(name, standing);
      return { name, evicted: decision.evict };
    },
  };
}

Deno.test("Admission admits under the cap and makes no one leave", () => {
  const { admission, open } = setup();
  for (let i = 0; i < 4; i++) assert.equal(open(`10.0.0.${i}`).evicted, null);
  assert.equal(admission.size, 4);
});

Deno.test("Admission at the cap: a newcomer takes the place of the connection idle longest", () => {
  const { admission, open, tick } = setup();
  const first = open("10.0.0.1").name;
  tick(10);
  open("10.0.0.2");
  open("10.0.0.3");
  open("10.0.0.4");
  // Everyone has only just connected: their requests may be on their way.
  assert.deepEqual(admission.admit("10.0.0.5"), { admitted: false });
  tick(GRACE);
  const next = open("10.0.0.5");
  assert.equal(next.evicted, first);
  assert.equal(admission.size, 4, "the one given up is forgotten at once");
});

Deno.test("Admission never gives up a connection with a request in flight", () => {
  const { admission, open, tick } = setup();
  for (let i = 0; i < 4; i++) open(`10.0.0.${i}`, "busy");
  tick(60_000);
  assert.deepEqual(admission.admit("10.0.0.9"), { admitted: false });
  assert.equal(admission.size, 4);
});

Deno.test("Admission gives up connections being closed, then idle ones, then the slowest heads, then bodies", () => {
  const { admission, open, tick } = setup();
  const body = open("10.0.0.1", "body").name;
  const head = open("10.0.0.2", "head").name;
  const idle = open("10.0.0.3", "idle").name;
  const closing = open("10.0.0.4", "closing").name;
  tick(GRACE);
  const order: (string | null)[] = [];
  for (let i = 0; i < 4; i++) order.push(open(`10.1.0.${i}`).evicted);
  assert.deepEqual(order, [closing, idle, head, body]);
  assert.equal(admission.size, 4);
});

Deno.test("Admission takes from the address holding the most connections first", () => {
  const { admission, open, tick } = setup({ maxConnections: 5, maxPerAddress: 5 });
  const lone = open("10.0.0.1").name; // idle longest, but its address holds one connection
  tick(1);
  const heavy = [open("10.0.0.9").name, open("10.0.0.9").name, open("10.0.0.9").name];
  open("10.0.0.2", "busy");
  tick(GRACE);
  const decision = admission.admit("10.0.0.3");
  assert.ok(decision.admitted);
  assert.equal(decision.evict, heavy[0]);
  assert.notEqual(decision.evict, lone);
});

Deno.test("Admission holds one address to its share; its newcomer replaces its own cheapest", () => {
  const { admission, open, tick } = setup({ maxConnections: 100, maxPerAddress: 3 });
  const own = [open("10.0.0.6", "head").name, open("10.0.0.6").name, open("10.0.0.6").name];
  const other = open("10.0.0.7").name;
  // At its share, all within their grace: the newcomer is refused, nobody is dropped.
  assert.deepEqual(admission.admit("10.0.0.6"), { admitted: false });
  tick(GRACE);
  // Past it: the address makes room itself, idle before heads.
  const next = open("10.0.0.6");
  assert.equal(next.evicted, own[1]);
  assert.equal(admission.held("10.0.0.6"), 3);
  assert.equal(admission.held("10.0.0.7"), 1, "another address is untouched");
  assert.ok(other);
  // All of its connections busy: the newcomer is refused, though the total has room.
  for (const name of [own[0]!, own[2]!, next.name!]) admission.set(name, "busy");
  tick(GRACE);
  assert.deepEqual(admission.admit("10.0.0.6"), { admitted: false });
  assert.ok(admission.admit("10.0.0.8").admitted);
});

Deno.test("Admission: a trusted proxy's connections have no share until their PROXY header names a client", () => {
  const { admission, open, tick } = setup({ maxConnections: 100, maxPerAddress: 2 });
  const proxied = [1, 2, 3, 4].map(() => open("10.9.9.9", "idle", true).name!);
  assert.equal(admission.held("10.9.9.9"), 4);
  tick(GRACE);
  assert.deepEqual(admission.regroup(proxied[0]!, "203.0.113.1"), { admitted: true, evict: null });
  assert.deepEqual(admission.regroup(proxied[1]!, "203.0.113.1"), { admitted: true, evict: null });
  assert.equal(admission.held("203.0.113.1"), 2);
  // A third from the same client: its share is full, so its cheapest goes.
  assert.deepEqual(admission.regroup(proxied[2]!, "203.0.113.1"), {
    admitted: true,
    evict: proxied[0],
  });
  assert.equal(admission.held("203.0.113.1"), 2);
  assert.equal(admission.size, 3);
  // Its share full of busy connections: refused.
  admission.set(proxied[1]!, "busy");
  admission.set(proxied[2]!, "busy");
  assert.deepEqual(admission.regroup(proxied[3]!, "203.0.113.1"), { admitted: false });
});

Deno.test("Admission above the high-water mark gives up idle connections only, longest idle first", () => {
  const { admission, open, tick } = setup({ maxConnections: 10, highWater: 3 });
  const names = [open("10.0.0.1").name, open("10.0.0.2", "head").name, open("10.0.0.3").name];
  open("10.0.0.4", "busy");
  open("10.0.0.5", "body");
  assert.equal(admission.reclaim(), null, "nobody has had their grace yet");
  tick(GRACE);
  assert.equal(admission.reclaim(), names[0]);
  assert.equal(admission.reclaim(), names[2]);
  assert.equal(admission.reclaim(), null, "at the high-water mark");
  assert.equal(admission.size, 3);
});

Deno.test("Admission frees the slowest body's link when every link is lent", () => {
  const { admission, open, tick } = setup({ maxConnections: 10 });
  const slow = open("10.0.0.1", "body").name;
  tick(100);
  open("10.0.0.2", "body");
  open("10.0.0.3", "head");
  tick(GRACE);
  assert.equal(admission.reclaimBody(), slow);
  assert.equal(admission.size, 2);
});

Deno.test("Admission counts a removed or moved connection once", () => {
  const { admission, open } = setup({ maxConnections: 10, maxPerAddress: 10 });
  const a = open("10.0.0.1").name!;
  admission.remove(a);
  admission.remove(a);
  assert.equal(admission.size, 0);
  assert.equal(admission.held("10.0.0.1"), 0);
});

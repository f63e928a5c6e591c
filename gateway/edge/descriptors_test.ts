import assert from "node:assert/strict";
import {
  connectionCap,
  DESCRIPTORS_PER_CONNECTION,
  readOpenFileLimit,
  RESERVED_DESCRIPTORS,
  SHED_SLOTS,
  softOpenFileLimit,
} from "./descriptors.ts";

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            20000                524288               files
Max locked memory         8388608              8388608              bytes
`;

Deno.test("softOpenFileLimit reads the soft limit of open files from /proc/self/limits", () => {
  assert.equal(softOpenFileLimit(LIMITS), 20_000);
  assert.equal(softOpenFileLimit(LIMITS.replace("20000  ", "unlimited")), null);
  assert.equal(softOpenFileLimit("Max cpu time unlimited"), null);
});

Deno.test("connectionCap keeps the reserve and four descriptors per connection", () => {
  assert.equal(connectionCap(20_000), Math.floor((20_000 - RESERVED_DESCRIPTORS - SHED_SLOTS) / 4));
  assert.equal(DESCRIPTORS_PER_CONNECTION, 4);
  assert.equal(connectionCap(1024), 176);
  assert.equal(connectionCap(100), 1, "never zero: one connection is better than none");
  const cap = connectionCap(20_000);
  assert.ok(
    cap * DESCRIPTORS_PER_CONNECTION + RESERVED_DESCRIPTORS + SHED_SLOTS <= 20_000,
    "the cap fits the limit",
  );
});

Deno.test("readOpenFileLimit reads this process's limit", async () => {
  const limit = await readOpenFileLimit();
  assert.ok(limit !== null && limit > 0, String(limit));
});

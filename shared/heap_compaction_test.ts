import assert from "node:assert/strict";
import { cLibraryPath, RUN_FLAGS, trimGrant } from "./launcher.ts";
import { burst } from "./testing/burst.ts";

Deno.test("after a burst, a service given the trim grant gives the freed pages back", async () => {
  const grant = trimGrant(await cLibraryPath());
  const trimmed = await burst([...RUN_FLAGS, ...grant.flags], grant.env);
  assert.ok(trimmed.peak - trimmed.before > 60, JSON.stringify(trimmed));
  assert.ok(trimmed.peak - trimmed.after > 40, `not given back: ${JSON.stringify(trimmed)}`);
  // The same burst without the grant: the garbage is collected all the same, but the pages stay.
  const kept = await burst(RUN_FLAGS, {});
  assert.ok(kept.peak - kept.after < 20, `given back without a trim: ${JSON.stringify(kept)}`);
});

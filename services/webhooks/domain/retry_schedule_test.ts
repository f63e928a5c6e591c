import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { nextAttemptDelay, parseRetrySchedule } from "./retry_schedule.ts";

Deno.test("parseRetrySchedule() reads the documented default", () => {
  assertEquals(parseRetrySchedule("5s,5m,30m,2h,5h,10h,10h"), [
    5_000,
    300_000,
    1_800_000,
    7_200_000,
    18_000_000,
    36_000_000,
    36_000_000,
  ]);
  assertEquals(parseRetrySchedule(" 250ms , 1d"), [250, 86_400_000]);
});

Deno.test("parseRetrySchedule() names the step it cannot read", () => {
  assertEquals(
    parseRetrySchedule("5s,soon"),
    'has "soon", which is not a duration like 500ms, 5s, 5m, 2h or 1d',
  );
  assertEquals(typeof parseRetrySchedule("5s,"), "string");
  assertEquals(typeof parseRetrySchedule("-5s"), "string");
});

Deno.test("nextAttemptDelay() follows the schedule, then gives up", () => {
  const schedule = [1000, 2000];
  assertEquals(nextAttemptDelay(schedule, 1), 1000);
  assertEquals(nextAttemptDelay(schedule, 2), 2000);
  assertEquals(nextAttemptDelay(schedule, 3), null);
});

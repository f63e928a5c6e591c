import { loopFailed, onDatabaseBack, platformRead, type Sql } from "@printshop/shared/db";
import {
  Backoff,
  GATHER_MS,
  IDLE_POLL_MAX_MS,
  IdlePoll,
  pause,
  POLL_INTERVAL_MS,
  Waker,
} from "@printshop/shared/events/waker";
import type { Stoppable } from "@printshop/shared/service-main";
import { nextAttemptDelay } from "./domain/retry_schedule.ts";
import {
  claimDueDeliveries,
  type ClaimedDelivery,
  SUBSCRIPTION_ACTIVE,
} from "./store/deliveries.ts";
import { DELIVERIES_CHANNEL, purgeOldEvents } from "./store/events.ts";
import { attemptRecorder, deliverOnce, type DispatchDeps, leaseMs } from "./dispatch.ts";
import { keptSender } from "./delivery/sender.ts";

export interface WorkerOptions {
  /**
   * Attempts under way at once in this process (signing and the HTTP exchange; recording the
   * outcome happens after the slot is given back).
   */
  concurrency?: number;
  /**
   * Safety net under LISTEN/NOTIFY: how soon an idle worker looks for due deliveries anyway
   * after its last activity. Each look that finds nothing doubles the wait, up to
   * `idlePollMaxMs`. Due retries do not depend on it: the worker sleeps until the next one.
   */
  pollIntervalMs?: number;
  /** The longest an idle worker goes without looking: the bound on a lost notification. */
  idlePollMaxMs?: number;
  /** After claiming deliveries, how long to let further notifications gather before the next. */
  gatherMs?: number;
  /** Whether queued deliveries wake the worker through LISTEN (yes unless said); else it polls. */
  listen?: boolean;
}

/** The delivery worker as its process holds it: stopped at the end, settled by a kick or a tick. */
export interface DeliveryWorker extends Stoppable {
  /** Claims what is due now; resolves once those attempts are recorded. */
  settle(): Promise<void>;
}

/** The longest single wait: setTimeout cannot take more than 2³¹ − 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Milliseconds until the earliest delivery of an active subscription falls due (0 when one is
 * due already), by the database's clock; null when nothing is queued. The claim's conditions,
 * on the same index, over every organisation's deliveries as the claim does (the platform's read).
 */
async function msUntilNextDue(sql: Sql): Promise<number | null> {
  const [row] = await platformRead(sql, (q) =>
    q<{ wait_ms: number }[]>`
    SELECT least(greatest(0, ceil(
             extract(epoch FROM d.next_attempt_at - clock_timestamp()) * 1000)), ${MAX_TIMER_MS}
           )::int AS wait_ms
    FROM deliveries d
    WHERE d.status IN ('pending', 'retrying') AND d.next_attempt_at IS NOT NULL
      AND ${q.unsafe(SUBSCRIPTION_ACTIVE)}
    ORDER BY d.next_attempt_at
    LIMIT 1`);
  return row ? row.wait_ms : null;
}

/**
 * Sends due deliveries, up to `concurrency` at a time, as slots free up. New deliveries wake it
 * through NOTIFY from whichever replica queued them. Between them it sleeps until the earliest
 * queued delivery falls due (read from the database once everything due is claimed), or until a
 * retry of an attempt it made may have fallen due (from the retry schedule), whichever comes
 * first: a due retry is sent on time without polling.
 *
 * What it cannot know of is found by a safety poll, `pollIntervalMs` after its last activity,
 * then less and less often while nothing turns up, at least every `idlePollMaxMs` (25 s by
 * default): a notification lost in a way the worker cannot see, or a retry another replica
 * scheduled and then died without sending. It claims at once when its LISTEN connection comes
 * back after a drop, since notifications sent meanwhile are lost.
 */
export async function startDeliveryWorker(
  given: DispatchDeps,
  options: WorkerOptions = {},
): Promise<DeliveryWorker> {
  const concurrency = options.concurrency ?? 32;
  // The worker's attempts reuse each endpoint's connections; stop() closes them.
  const sender = given.send === undefined
    ? keptSender({ connectionsPerTarget: concurrency })
    : null;
  const deps: DispatchDeps = sender === null ? given : { ...given, send: sender.send };
  const gatherMs = options.gatherMs ?? GATHER_MS;
  const idlePollMaxMs = options.idlePollMaxMs ?? IDLE_POLL_MAX_MS;
  const idle = new IdlePoll(options.pollIntervalMs ?? POLL_INTERVAL_MS, idlePollMaxMs);
  const lease = leaseMs(deps.timeoutMs);
  const waker = new Waker();
  // Back from a database outage: claim at once, rather than at the end of a backoff.
  const forgetBack = onDatabaseBack(() => waker.wake());
  const record = attemptRecorder(deps.sql, deps.retrySchedule);
  /** Attempts under way (signing, sending), each holding a slot. */
  let attempting = 0;
  /** Every delivery this worker handles until its attempt is recorded: stop() waits for them. */
  const tasks = new Set<Promise<void>>();
  const backoff = new Backoff(250, 10_000);
  let running = true;
  let lastPurge = 0;

  // Times are performance.now() milliseconds.
  /** Claim on the next round: at start, on a notification, or when a slot frees up. */
  let claimWanted = true;
  /** Every free slot was filled (or none was free): more may be due than was claimed. */
  let backlog = false;
  /** When the earliest queued delivery falls due; Infinity when none; undefined when unknown. */
  let nextDueAt: number | undefined;
  /**
   * Attempts this worker finished since it last read the next due time: each may have
   * scheduled a retry, due no later than `at`, which that read may not have seen.
   */
  let unseenRetries: { finishedAt: number; at: number }[] = [];
  /** When the safety poll runs next. */
  let safetyAt = 0;
  /** Rounds in a row that found a delivery due yet could claim none (another replica has it). */
  let blocked = 0;

  let listening = false;
  const listener = options.listen === false
    ? null
    : await deps.sql.listen(DELIVERIES_CHANNEL, () => {
      claimWanted = true;
      waker.wake();
    }, () => {
      // Called again each time the connection is back after a drop: look for what was missed.
      if (listening) {
        claimWanted = true;
        waker.wake();
      }
      listening = true;
    });

  const purgeHourly = async (): Promise<void> => {
    if (Date.now() - lastPurge < 3_600_000) return;
    lastPurge = Date.now();
    const removed = await purgeOldEvents(deps.sql);
    if (removed > 0) deps.logger.info("old events removed from the event log", { removed });
  };

  /**
   * Sends one delivery. Its slot is taken while the attempt runs (signing, the HTTP exchange) and
   * given back as soon as the outcome is known: recording it goes into the recorder's next
   * statement meanwhile, so a slot waits on the endpoint, never on the database.
   */
  const send = (delivery: ClaimedDelivery): void => {
    const claimedAt = performance.now();
    let recorded = true;
    let sending = true;
    const release = (): void => {
      if (!sending) return;
      sending = false;
      attempting--;
      if (backlog) claimWanted = true;
      waker.wake();
    };
    attempting++;
    const task: Promise<void> = deliverOnce(deps, delivery, "automatic", (claimed, attempt) => {
      release();
      return record(claimed, attempt);
    })
      .catch((error) => {
        recorded = false;
        deps.logger.error("webhook delivery could not be recorded", {
          deliveryId: delivery.id,
          error: error instanceof Error ? error.message : String(error),
        });
      })
      .finally(() => {
        release();
        tasks.delete(task);
        const finishedAt = performance.now();
        // A failed attempt's retry is due after the schedule's step; an attempt that could not
        // be recorded is due again when its claim runs out.
        const delay = recorded
          ? nextAttemptDelay(deps.retrySchedule, delivery.attempt)
          : claimedAt + lease - finishedAt;
        if (delay !== null) unseenRetries.push({ finishedAt, at: finishedAt + delay });
        if (backlog) claimWanted = true;
        waker.wake();
      });
    tasks.add(task);
  };

  /**
   * Slots free for new attempts. Attempts whose outcome is still being recorded count too past
   * `concurrency` of them, so a database slow to record holds claims back instead of letting
   * unrecorded attempts pile up.
   */
  const freeSlots = (): number => Math.min(concurrency - attempting, 2 * concurrency - tasks.size);

  /** When the loop has something to do, if nothing wakes it before. */
  const nextWake = (): number =>
    Math.min(
      nextDueAt ?? 0,
      safetyAt,
      ...unseenRetries.map((r) => r.at),
    );

  const loop = (async () => {
    while (running) {
      if (backlog && claimWanted && freeSlots() < concurrency / 4) {
        // Behind: let a few more deliveries finish, so that one claim fills several slots.
        await pause(gatherMs);
      }
      const roundAt = performance.now();
      const free = freeSlots();
      if (free <= 0) {
        // A finishing delivery wakes the loop (and asks for a claim) when a slot frees up.
        backlog = true;
        await waker.sleep(idlePollMaxMs);
        continue;
      }
      if (!claimWanted && nextWake() > roundAt) {
        const woken = await waker.sleep(Math.min(nextWake() - roundAt, MAX_TIMER_MS));
        if (woken && claimWanted) idle.reset();
        continue;
      }
      const safetyPoll = !claimWanted && roundAt >= safetyAt;
      claimWanted = false;
      let claimedCount = 0;
      try {
        await purgeHourly();
        const claimed = await claimDueDeliveries(deps.sql, free, lease);
        claimedCount = claimed.length;
        backoff.reset();
        for (const delivery of claimed) send(delivery);
        backlog = claimed.length === free;
        if (backlog) {
          idle.reset();
          continue;
        }
        // Everything due when the claim ran is claimed (save rows another replica was claiming
        // at that moment). Read the next due time when the one known was reached, when a retry
        // of ours may have become due, or on the safety poll; a notification's round does not
        // change it (new deliveries are due at once, and are claimed).
        const reached = nextDueAt === undefined || nextDueAt <= roundAt ||
          unseenRetries.some((r) => r.at <= roundAt);
        if (reached || safetyPoll) {
          const readAt = performance.now();
          const waitMs = await msUntilNextDue(deps.sql);
          unseenRetries = unseenRetries.filter((r) => r.finishedAt >= readAt);
          blocked = waitMs === 0 && claimed.length === 0 ? blocked + 1 : 0;
          // Due yet not claimable twice in a row: another replica holds it; back off a little.
          const floor = blocked > 1 ? Math.min(1000, 25 * 2 ** blocked) : 0;
          nextDueAt = waitMs === null ? Infinity : readAt + Math.max(waitMs, floor);
        }
      } catch (error) {
        loopFailed(deps.logger, "webhook worker cannot claim deliveries", error);
        claimWanted = true;
        nextDueAt = undefined;
        await waker.sleep(backoff.next());
        continue;
      }
      if (claimedCount > 0) idle.reset();
      safetyAt = performance.now() + idle.next();
      // Under a steady stream, the deliveries queued meanwhile make the next claim.
      if (claimedCount > 0) await pause(gatherMs);
    }
    await Promise.allSettled([...tasks]);
  })();

  return {
    async stop() {
      if (!running) return;
      running = false;
      forgetBack();
      waker.wake();
      await loop;
      waker.release();
      await sender?.close();
      await listener?.unlisten().catch(() => {});
    },
    async settle() {
      if (!running) return;
      claimWanted = true;
      await waker.settle();
      await Promise.allSettled([...tasks]);
    },
  };
}

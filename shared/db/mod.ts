import { AsyncLocalStorage } from "node:async_hooks";
import postgres from "postgres";
import type { Logger } from "../log.ts";
import { type PoolGauge, poolGauge } from "../metrics.ts";
import { withSpan } from "../telemetry.ts";
import { traceStatements } from "./statement_spans.ts";
import { isDatabaseUnavailable, watchDatabase } from "./availability.ts";
export { currentOrganization, withOrganization } from "./tenancy.ts";
import { currentOrganization, ensureTenancy, ORGANIZATION_SETTING, ROLES } from "./tenancy.ts";
import { type PinnedLease, type PinnedPoolLimits, PinnedPools } from "./pinned_pools.ts";
import { closeCommitScope, committed, openCommitScope } from "./commit_wakes.ts";
export { type PinnedPoolLimits, pinnedReadLimits } from "./pinned_pools.ts";
export { wakeAfterCommit, wakeAfterCommits } from "./commit_wakes.ts";

export {
  databaseUnavailable,
  isDatabaseUnavailable,
  loopFailed,
  onDatabaseBack,
} from "./availability.ts";

export type Sql = postgres.Sql;
export type TransactionSql = postgres.TransactionSql;
/** Either the pool or an open transaction: stores take this so callers choose the boundary. */
export type Queryable = postgres.Sql | postgres.TransactionSql;
/** A piece of SQL built with a tagged template, to interpolate into a statement. */
export type Fragment = postgres.PendingQuery<postgres.Row[]>;
/** A statement built and not yet sent, whose rows are `T`. */
export type Statement<T extends readonly postgres.MaybeRow[]> = postgres.PendingQuery<T>;

/**
 * Sends `ahead` at once and runs `next` without waiting for it: on one connection (a
 * transaction) the statements `next` issues follow it in the same round trip, and the server runs
 * them after it, so they see what it wrote. Should `ahead` fail, the transaction is aborted and
 * `next` fails too; `ahead`'s own error is the one thrown.
 */
export async function behind<T extends readonly postgres.MaybeRow[], R>(
  ahead: postgres.PendingQuery<T>,
  next: () => Promise<R>,
): Promise<[postgres.RowList<T>, R]> {
  // Should the connection die under `ahead`, what `next` sent after it may never be answered
  // (postgres.js#1186: statements it had queued on a reserved connection are dropped with it),
  // so waiting for `next` ends with `ahead`'s failure then.
  const lost = new Pending();
  lost.add(ahead.execute());
  let result: R;
  try {
    result = await lost.orLost(next());
  } catch (error) {
    await ahead;
    throw error;
  }
  return [await ahead, result];
}

/**
 * Statements sent without waiting for their answers, and the first sign that their connection
 * is gone. postgres.js never answers a statement it had queued on a reserved connection when
 * that connection dies (porsager/postgres#1186), only the ones already on the wire: whatever
 * waits on the queued ones must also wait on `lost`, which fails with the first of these
 * statements that failed for want of the database.
 */
class Pending {
  /** Each statement's error once it is answered, or null; none is an unhandled rejection. */
  readonly #answers: Promise<unknown>[] = [];
  readonly lost: Promise<never>;
  #lose: (error: unknown) => void = () => {};

  constructor() {
    this.lost = new Promise<never>((_, reject) => this.#lose = reject);
    this.lost.catch(() => {});
  }

  add(statement: PromiseLike<unknown>): void {
    this.#answers.push(
      Promise.resolve(statement).then(() => null, (error: unknown) => {
        const failure = error ?? new Error("statement failed");
        if (isDatabaseUnavailable(failure)) this.#lose(failure);
        return failure;
      }),
    );
  }

  /**
   * The first failure among them as soon as it is answered (they are answered in the order they
   * were sent, so it is the earliest's), or null once every one succeeded.
   */
  firstFailure(): Promise<unknown> {
    const answers = this.#answers;
    return new Promise((resolve) => {
      let left = answers.length;
      if (left === 0) resolve(null);
      for (const answer of answers) {
        void answer.then((failure) => {
          if (failure !== null) resolve(failure);
          else if (--left === 0) resolve(null);
        });
      }
    });
  }

  /** `work`'s outcome, or the connection's loss should that come first. */
  orLost<T>(work: Promise<T>): Promise<T> {
    return Promise.race([work, this.lost]);
  }
}

/** What each open `transaction()` was handed by `sendBeforeCommit`, with its BEGIN. */
const beforeCommit = new WeakMap<object, Pending>();

/**
 * Runs `fn` in a transaction on one connection of the pool, and commits when it resolves (rolls
 * back when it throws), as postgres.js's `sql.begin` does, but in fewer round trips: BEGIN leaves
 * with `fn`'s first statement (`sql.begin` waits for its answer before running `fn`), and COMMIT
 * with the statements `fn` handed to `sendBeforeCommit`. Each round trip saved was measured at
 * about 0.2 ms of CPU, client and server together. Every transaction of the services opens here.
 *
 * The transaction serves the organisation the current work is for (`withOrganization`,
 * tenancy.ts): BEGIN carries it to the row-level policies, in the same message. Outside any
 * organisation's work, the policies show it no tenant rows at all.
 *
 * A statement `fn` sends must be awaited, or handed to `Promise.all`, `behind` or
 * `sendBeforeCommit`: a failed statement nobody waits for is an unhandled rejection.
 */
export async function transaction<T>(
  sql: Sql,
  fn: (tx: TransactionSql) => Promise<T>,
): Promise<T> {
  return await onOneConnection(sql, opening(currentOrganization(), false), fn, true);
}

/**
 * Runs `fn`'s reads for the current organisation. Given a transaction already (a store called
 * inside one), `fn` runs on it as it is. Where the organisation holds a pool pinned to it
 * (pinned_pools.ts; the pool was opened with `pinnedReads`), `fn`'s statements go straight to that
 * pool, each on its own, as reads went before the policies: its connections were opened naming the
 * organisation, and serve no other. Otherwise on one connection, in a transaction that names it to
 * the policies, as `transaction` does. Nothing is written, so nothing waits for the COMMIT: it
 * follows `fn`'s last statement, and the connection goes back to the pool with it on its way (or
 * once it is answered, should postgres.js still be holding it back). A read costs no round trip
 * more than a statement sent straight to the pool, which would see no tenant rows.
 */
export async function read<T>(
  sql: Queryable,
  fn: (q: Queryable) => Promise<T>,
  options: ReadOptions = {},
): Promise<T> {
  // Inside a read or transaction on this pool already (a page's `render`, say): its connection
  // serves this one too, behind what it has sent.
  const open = connectionOf.getStore();
  const given = !isPool(sql) ? sql : open?.pool === sql && !open.done ? open.connection : null;
  if (given !== null) {
    // Counted before anything is sent on it: `allSent` in the outer read waits for this one.
    const outer = open?.connection === given ? open : undefined;
    if (outer) outer.nested++;
    try {
      if (options.customPlans) await given.unsafe(CUSTOM_PLANS);
      return await fn(given);
    } finally {
      if (outer) outer.nested--;
    }
  }
  // Given an organisation's pinned pool (a read nested in a pinned read): it is that one's; a read
  // that plans afresh takes a transaction on it for the setting.
  if (PINNED.has(sql as Sql) && !options.customPlans) return await fn(sql);
  // A read that plans each statement afresh sets that for its transaction: it needs one.
  const pinned = options.customPlans || PINNED.has(sql as Sql) ? null : pinnedLease(sql as Sql);
  if (pinned) {
    try {
      return await fn(pinned.sql);
    } finally {
      pinned.done();
    }
  }
  return await onOneConnection(
    sql as Sql,
    opening(currentOrganization(), false, options.customPlans),
    fn,
    false,
  );
}

export interface ReadOptions {
  /**
   * Plan each statement for the values it is sent with, never with a plan kept for any values
   * (plan_cache_mode, for the rest of the read). For statements whose best plan depends on the
   * organisation's size, which a kept plan takes to be the average: after five runs PostgreSQL
   * may keep one costed for an organisation of a few hundred rows, and a `search` list of a shop
   * of 100,000 quotes then read every one of them by key to join the search's few ids (45 ms,
   * where the plan for the shop looks the ids up, 9 ms). Planning afresh costs ~0.3 ms.
   */
  customPlans?: boolean;
}

/** What `read`'s customPlans sends: for the rest of the transaction. */
export const CUSTOM_PLANS = "set local plan_cache_mode = force_custom_plan";

/** What the current read or transaction holds: its connection, for the reads nested in it. */
interface Held {
  pool: Sql;
  connection: postgres.ReservedSql;
  /** Set once it is over: a nested read after that opens its own. */
  done: boolean;
  /** How many reads nested in it are running: `allSent` does nothing then (whose last?). */
  nested: number;
  /** A read's: sends its COMMIT now, once, and marks the read over for nested reads (`allSent`). */
  sendCommit: (() => unknown) | undefined;
}

const connectionOf = new AsyncLocalStorage<Held>();

/**
 * Says, from inside a read's `fn`, that the read has sent its last statement: the COMMIT is sent
 * now, behind it, and leaves with it in one write, where one sent once `fn` is done would take a
 * write of its own (see `read`). For a read that takes its last statement's answer after this (a
 * page streamed as it arrives): the connection stays the read's until `fn` is done and the
 * COMMIT is answered. A statement sent on `q` after this runs after the COMMIT, outside any
 * transaction that names an organisation, and sees no tenant rows; a read nested after it opens
 * a connection of its own. In a transaction, or a read nested in another, it does nothing: the
 * outer one commits when it is done.
 */
export function allSent(q: Queryable): void {
  const open = connectionOf.getStore();
  if (open?.connection === q && open.nested === 0 && !open.done) open.sendCommit?.();
}

/**
 * A transaction for work that is rightly about every organisation (relaying the outbox, claiming
 * due deliveries, finding an approval link by its token): it takes the role that bypasses the
 * policies, `printshop_platform`, for this transaction only. Each caller is one of a short list,
 * named in the README ("Database roles") and held to it by shared/db/platform_callers_test.ts.
 */
export async function platformTransaction<T>(
  sql: Sql,
  fn: (tx: TransactionSql) => Promise<T>,
): Promise<T> {
  return await onOneConnection(sql, opening(undefined, true), fn, true);
}

/** The same for reads that write nothing: the COMMIT is not waited for (see `read`). */
export async function platformRead<T>(sql: Sql, fn: (q: Queryable) => Promise<T>): Promise<T> {
  return await onOneConnection(sql, opening(undefined, true), fn, false);
}

/** The current organisation's pinned pool of `sql`, for one read or statement, if it has one. */
function pinnedLease(sql: Sql): PinnedLease | null {
  const organizationId = currentOrganization();
  if (organizationId === undefined) return null;
  return pinnedOf.get(sql)?.lease(organizationId) ?? null;
}

/** A pool, as opposed to a reserved connection or a transaction (which can release or nest). */
function isPool(sql: Queryable): sql is Sql {
  return !("release" in sql) && !("savepoint" in sql);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * What opens a transaction: BEGIN, then the organisation it serves or the platform role, in one
 * simple-protocol message (one statement's cost, no parameters to bind). `SET LOCAL` rather than
 * `SELECT set_config(…, true)`, which means the same: a utility statement is neither planned nor
 * run by the executor (measured: a third more of these transactions a second on one cluster).
 * The organisation is written into the text, so it is held to a UUID's shape first; it comes from
 * the gateway's signed context and is a UUID there too.
 */
function opening(
  organizationId: string | undefined,
  platform: boolean,
  customPlans = false,
): string {
  const plans = customPlans ? `; ${CUSTOM_PLANS}` : "";
  if (platform) return `begin; set local role ${ROLES.platform}${plans}`;
  if (organizationId === undefined) return `begin${plans}`;
  if (!UUID.test(organizationId)) throw new Error("An organisation id is a UUID");
  return `begin; set local ${ORGANIZATION_SETTING} = '${organizationId}'${plans}`;
}

/**
 * How long a transaction or read waits for a connection of its own. postgres.js's `reserve()`
 * does not fail when the server is gone: while connects are refused its waiter is never answered,
 * even after the server is back (found killing PostgreSQL under a write load: the gateway's key
 * look-up, and every request sharing it, hung for good). Past this, the wait is given up as
 * RESERVE_TIMEOUT (503 with Retry-After, availability.ts), and a connection that comes later goes
 * straight back. As long as the pool's own connect timeout: a busy pool hands one out in ms.
 */
const RESERVE_TIMEOUT_MS = 2_000;

async function reserveWithin(sql: Sql, ms: number): Promise<postgres.ReservedSql> {
  const reserving = sql.reserve();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reserving.then((late) => late.release(), () => {});
      reject(Object.assign(new Error("No database connection within " + ms + " ms"), {
        code: "RESERVE_TIMEOUT",
      }));
    }, ms);
  });
  try {
    return await Promise.race([reserving, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

async function onOneConnection<T, Q>(
  sql: Sql,
  begin: string,
  fn: (tx: Q) => Promise<T>,
  awaitCommit: boolean,
): Promise<T> {
  const pool = poolGauges.get(sql) ?? UNNAMED_POOL;
  pool.pending++;
  let connection: postgres.ReservedSql;
  try {
    connection = await reserveWithin(sql, RESERVE_TIMEOUT_MS);
  } finally {
    pool.pending--;
  }
  pool.used++;
  const pending = new Pending();
  beforeCommit.set(connection, pending);
  // A write's: an event it records may ask for the pool's relay to be woken once it commits.
  const scope = awaitCommit ? openCommitScope(sql, connection) : null;
  /**
   * Set when the connection died under the transaction (the server went away): the server ended
   * the transaction with it, and postgres.js has already taken it back as closed. It must not be
   * released: release() would put the dead connection in the open queue, where the next
   * statement given it waits for ever (found when PostgreSQL was killed under the outbox relay).
   */
  let died = false;
  /** A read's COMMIT, which the caller does not wait for, but the release does. */
  let releaseAfter: Promise<unknown> | undefined;
  /** Once sent: the server ends the transaction with it, whatever failed before it. */
  let commit: Promise<unknown> | undefined;
  /**
   * Set when a read's COMMIT left before `fn` was done (`allSent`, or with its one statement).
   * Its connection then goes back only once the COMMIT is answered, on every path: postgres.js
   * may still hold it in the reserved connection's own queue (which a release drops, and the
   * next user would run inside this transaction, with this organisation), and a COMMIT that fails
   * for want of the database says the connection is lost, which a streamed statement's failure
   * does not tell the read.
   */
  let committedEarly = false;
  const sendCommit = (): Promise<unknown> => {
    if (commit === undefined) {
      commit = connection.unsafe("commit").execute();
      // A read's, which nobody else waits for: tracked, so its failure is no unhandled rejection.
      if (!awaitCommit) pending.add(commit);
    }
    return commit;
  };
  const held: Held = {
    pool: sql,
    connection,
    done: false,
    nested: 0,
    sendCommit: awaitCommit ? undefined : () => commitEarly(),
  };
  /** A read's COMMIT sent before `fn` is done: the read is over for reads nested after it. */
  const commitEarly = (): void => {
    committedEarly = true;
    held.done = true;
    sendCommit();
  };
  // Sent now; it goes out with whatever `fn` sends before the next turn of the event loop.
  pending.add(connection.unsafe(begin).simple().execute());
  try {
    // A reserved connection takes the same statements a transaction does (it has no
    // `savepoint`, which nothing here uses). Every wait below also ends when the connection is
    // lost: a statement queued behind the one that found it dead is never answered.
    let result: T;
    try {
      const answer = connectionOf.run(held, () => fn(connection as unknown as Q));
      if (!awaitCommit && isUnsent(answer)) {
        // A read whose `fn` answers its one statement unsent (`(q) => q\`…\``): the statement
        // and the COMMIT are handed on now, behind the BEGIN, and leave in ONE write, where a
        // COMMIT sent once the answer is in takes a second (a socket write was the largest
        // single cost of a quote read in the quotes service: a sixth of its CPU). The connection
        // is the read's until the answer and the COMMIT's are in (committedEarly): postgres.js
        // refuses a BEGIN answered on a connection nobody holds.
        answer.execute();
        commitEarly();
        return await pending.orLost(answer);
      }
      result = await pending.orLost(answer);
    } catch (error) {
      // A statement sent ahead that failed aborted the transaction: the statements after it
      // only say so (25P02). Its own error is the one that tells what went wrong.
      throw (error as { code?: string }).code === IN_FAILED_TRANSACTION
        ? await pending.firstFailure() ?? error
        : error;
    }
    if (!awaitCommit) {
      // A read: its answers are in, and a COMMIT that fails has nothing of it to undo. The
      // connection goes back to the pool at once when the COMMIT is on its way, its next
      // user's statements behind it (after `allSent`, once it is answered). When postgres.js still
      // holds the COMMIT in the reserved connection's own queue, it goes back once the COMMIT
      // is answered: postgres.js answers a statement at its CommandComplete, and until the
      // ReadyForQuery after it (which can come in a later packet; always so for a statement's
      // first use on a connection, which is described first) it queues what is sent next.
      // Released then to someone waiting for a connection, that queue is dropped: the COMMIT
      // was never sent, and the next user ran inside this transaction, with this one's
      // organisation or platform role.
      if (!await handedOn(sendCommit())) releaseAfter = commit;
      return result;
    }
    sendCommit();
    const failure = await pending.firstFailure();
    // After a failed statement the server answers COMMIT with a rollback: nothing was written.
    // After a lost connection it never answers at all.
    if (isDatabaseUnavailable(failure)) throw failure;
    await pending.orLost(commit!);
    if (failure) throw failure;
    committed(scope);
    return result;
  } catch (error) {
    died = isDatabaseUnavailable(error) || isDatabaseUnavailable(await pending.firstFailure());
    // After a COMMIT the server has ended the transaction itself (a failed one by rolling back);
    // a ROLLBACK sent now could land in the next user's transaction.
    if (!died && commit === undefined) {
      await pending.orLost(connection.unsafe("rollback").execute()).catch(
        (rollbackError: unknown) => {
          died = isDatabaseUnavailable(rollbackError);
        },
      );
    }
    throw error;
  } finally {
    // Work `fn` left behind (a promise nobody awaited) must not reach the connection once it
    // serves someone else: a nested read after this opens its own.
    held.done = true;
    beforeCommit.delete(connection);
    closeCommitScope(connection, scope);
    if (committedEarly) releaseAfter = commit;
    if (!died) releaseWhenDone(sql, pending, connection, releaseAfter);
    pool.used--;
  }
}

/**
 * Whether postgres.js has handed `statement` on to its connection, asked once it has had the
 * chance: it does so a turn after the statement is sent (Query.handle awaits once first).
 */
async function handedOn(statement: object): Promise<boolean> {
  await null;
  await null;
  return handedToConnection(statement);
}

/**
 * Whether `value` is a postgres.js statement nobody has sent yet: built with the tagged template
 * (a Query, which is a Promise) and neither awaited nor executed (postgres@3.4.7, src/query.js
 * sets `executed` as it hands a statement on).
 */
function isUnsent<V>(value: V): value is V & { execute(): unknown } {
  return value instanceof Promise && (value as { executed?: unknown }).executed === false &&
    typeof (value as { execute?: unknown }).execute === "function";
}

/**
 * Whether postgres.js has handed `statement` to its connection (written, or in the connection's
 * pipeline), rather than holding it in a reserved connection's own queue: it marks a statement
 * with the connection's backend (Query.state) only as it does so (postgres@3.4.7,
 * connection.js execute()). Read as a hint: when it says no, the caller waits for the answer,
 * which is always safe.
 */
function handedToConnection(statement: object): boolean {
  return (statement as { state?: unknown }).state != null;
}

/**
 * Gives the connection back to the pool, at once or once `commit` is answered; never when it was
 * lost with its connection (it is never answered then, and the pool has it back as closed).
 */
function releaseWhenDone(
  pool: Sql,
  pending: Pending,
  connection: postgres.ReservedSql,
  commit: Promise<unknown> | undefined,
): void {
  if (commit === undefined) {
    connection.release();
    return;
  }
  const released = pending.orLost(commit).then(
    () => connection.release(),
    (error: unknown) => void (isDatabaseUnavailable(error) || connection.release()),
  );
  let set = releasing.get(pool);
  if (!set) releasing.set(pool, set = new Set());
  set.add(released);
  void released.finally(() => set.delete(released));
}

/** Each pool's reads whose connection is given back once their COMMIT is answered. */
const releasing = new WeakMap<Sql, Set<Promise<void>>>();

/** How long a pool's end() waits for those before it goes on (a lost COMMIT never answers). */
const RELEASE_WAIT_MS = 1_000;

/**
 * postgres.js's end() waits for ever on a connection that is still reserved when it is called
 * and released after (porsager/postgres#925): a read that returned a moment ago may still hold
 * its connection until its COMMIT is answered, so the pool's end() lets those finish first.
 */
function endAfterReleases(pool: Sql): void {
  const end = pool.end.bind(pool);
  pool.end = async (options?: { timeout?: number }): Promise<void> => {
    const waiting = [...releasing.get(pool) ?? []];
    if (waiting.length > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.all(waiting),
        new Promise((resolve) => timer = setTimeout(resolve, RELEASE_WAIT_MS)),
      ]);
      clearTimeout(timer);
    }
    return await end(options);
  };
}

const IN_FAILED_TRANSACTION = "25P02";

/**
 * Sends `statement` at once and lets the transaction's COMMIT follow it in the same round trip:
 * the caller goes on without its answer, and `transaction()` waits for it with the COMMIT's. A
 * failure of it fails the transaction (nothing is written) and is what `transaction()` throws.
 * For a transaction's last writes, whose answers nothing needs: an event, a write-back. Given
 * anything other than a `transaction()`'s connection (the pool, or a test's transaction), it
 * waits for the answer there and then.
 */
export async function sendBeforeCommit(
  tx: Queryable,
  statement: postgres.PendingQuery<postgres.Row[]>,
): Promise<void> {
  const pending = beforeCommit.get(tx);
  if (!pending) {
    await statement;
    return;
  }
  pending.add(statement.execute());
}

/**
 * One statement as a transaction of its own, for the organisation the current work is for (the
 * row-level policies see no tenant row of a statement sent straight to the pool). Where the
 * organisation holds a pinned pool (pinned_pools.ts), the statement goes there alone: a single
 * statement is a transaction by itself, and the connection names the organisation. Otherwise its
 * BEGIN (which names the organisation), the statement and the COMMIT leave together
 * (`sendBeforeCommit`). Either way it costs the one round trip the statement cost alone, and a
 * lock it takes (a quote number's counter, the event log's lock) is held for that round trip only.
 * Its rows once it is committed; its error, when it fails, and then nothing is written.
 */
export async function oneStatement<T extends readonly postgres.MaybeRow[]>(
  sql: Sql,
  statement: (tx: Queryable) => postgres.PendingQuery<T>,
): Promise<postgres.RowList<T>> {
  const pinned = pinnedLease(sql);
  if (pinned) {
    try {
      // The pinned pool serves many statements at once, but each is built synchronously: the
      // scope is open only while this one is, so an event in it asks for this write's wake.
      const scope = openCommitScope(sql, pinned.sql);
      let sent: postgres.PendingQuery<T>;
      try {
        sent = statement(pinned.sql);
      } finally {
        closeCommitScope(pinned.sql, scope);
      }
      const rows = await sent;
      committed(scope);
      return rows;
    } finally {
      pinned.done();
    }
  }
  return await statementIn(transaction, sql, statement);
}

/** The same as the platform (platformTransaction): for one of the README's listed callers. */
export async function platformStatement<T extends readonly postgres.MaybeRow[]>(
  sql: Sql,
  statement: (tx: TransactionSql) => postgres.PendingQuery<T>,
): Promise<postgres.RowList<T>> {
  return await statementIn(platformTransaction, sql, statement);
}

async function statementIn<T extends readonly postgres.MaybeRow[]>(
  run: (sql: Sql, fn: (tx: TransactionSql) => Promise<void>) => Promise<void>,
  sql: Sql,
  statement: (tx: TransactionSql) => postgres.PendingQuery<T>,
): Promise<postgres.RowList<T>> {
  let sent: postgres.PendingQuery<T> | undefined;
  await run(sql, async (tx) => {
    sent = statement(tx);
    await sendBeforeCommit(tx, sent as unknown as postgres.PendingQuery<postgres.Row[]>);
  });
  return await sent!;
}

export interface ConnectOptions {
  /** The service's own schema; every unqualified name resolves there. */
  schema: string;
  max?: number;
  applicationName?: string;
  /** Called once per statement; tests use it to count queries. */
  onQuery?: (text: string, parameters: readonly unknown[], types: readonly unknown[]) => void;
  /**
   * The role every connection takes as it opens (`SET ROLE` as a start-up parameter), for a pool
   * whose every statement is the platform's (the embedded bus).
   */
  role?: string;
  /**
   * Pools pinned to an organisation each, for `read` (pinned_pools.ts), beside this one; none
   * unless given. Their connections are opened as this pool's are, naming the organisation.
   */
  pinnedReads?: PinnedPoolLimits;
}

const DATE_OID = 1082;

/** Each pool's figures in the pool metrics, named by its application name. */
const poolGauges = new WeakMap<Sql, PoolGauge>();
// A pool made elsewhere than connect() (none today) is counted apart, under no name.
const UNNAMED_POOL: PoolGauge = { used: 0, pending: 0 };

/** Each pool's pinned pools (ConnectOptions.pinnedReads), for `read`. */
const pinnedOf = new WeakMap<Sql, PinnedPools>();
/** The pinned pools themselves: every statement on one is its organisation's. */
const PINNED = new WeakSet<Sql>();

/** Ends `sql`'s pinned pools for good: every read goes in a transaction from now on. */
export async function stopPinnedReads(sql: Sql): Promise<void> {
  await pinnedOf.get(sql)?.end();
}

/** The organisations that hold a pinned pool of `sql`'s now (tests say which way a read went). */
export function pinnedOrganizations(sql: Sql): readonly string[] {
  return pinnedOf.get(sql)?.organizations ?? [];
}

/**
 * Whether the server keeps a connection's start-up setting of the organisation, which pinned
 * pools rest on (pinned_pools.ts). A transaction pooler in front of it does not: it refuses the
 * parameter, or drops it, and then a pinned read would see no rows. One connection is opened with a
 * random organisation, and two statements on it must read it back. Answers why not, or null.
 */
export async function pinnedSettingRefused(
  url: string,
  timeoutMs: number = PINNED_CHECK_TIMEOUT_MS,
): Promise<string | null> {
  const probe = crypto.randomUUID();
  const sql = openPool(url, { schema: "public", max: 1 }, "pinned setting probe", {
    [ORGANIZATION_SETTING]: probe,
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  // postgres.js connects again and again to a server that closes the connection at start-up: the
  // check gives up after a while rather than hold the service's start.
  const timedOut = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
  });
  const check = async (): Promise<string | null> => {
    for (let i = 0; i < 2; i++) {
      const [row] = await sql<{ setting: string | null }[]>`
        SELECT nullif(current_setting(${ORGANIZATION_SETTING}, true), '') AS setting`;
      if (row?.setting !== probe) return "a connection did not keep its start-up setting";
    }
    return null;
  };
  try {
    return await Promise.race([
      check().catch((error) => `a connection with the start-up setting failed: ${String(error)}`),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
    await sql.end({ timeout: 1 });
  }
}

/** How long `pinnedSettingRefused` waits for its two statements (a connect takes ms). */
const PINNED_CHECK_TIMEOUT_MS = 5_000;

/** Opens a postgres.js pool bound to one schema. Dates stay `YYYY-MM-DD` strings. */
export function connect(url: string, options: ConnectOptions): Sql {
  const name = options.applicationName ?? options.schema;
  const pool = openPool(url, options, name);
  const limits = options.pinnedReads;
  // A pool that takes a role as it connects (the bus's, the platform's) serves no organisation.
  if (limits !== undefined && limits.pools > 0 && options.role === undefined) {
    const pinned = new PinnedPools(
      (organizationId, connections) => {
        // Written into the start-up message as a value, never into SQL; still held to the shape
        // the policies compare it with.
        if (!UUID.test(organizationId)) throw new Error("An organisation id is a UUID");
        // Named apart in pg_stat_activity, for the operator counting connections.
        const one = openPool(url, { ...options, max: connections }, `${name} pinned`, {
          [ORGANIZATION_SETTING]: organizationId,
        });
        PINNED.add(one);
        return one;
      },
      limits,
      poolGauge(`${name} pinned`),
    );
    pinnedOf.set(pool, pinned);
    const end = pool.end.bind(pool);
    pool.end = async (endOptions?: { timeout?: number }): Promise<void> => {
      await Promise.all([pinned.end(endOptions), end(endOptions)]);
    };
  }
  return pool;
}

function openPool(
  url: string,
  options: ConnectOptions,
  name: string,
  settings: Record<string, string> = {},
): Sql {
  const pool = postgres(url, {
    max: options.max ?? 10,
    idle_timeout: 30,
    // A database that does not answer a connect within 2 s is unavailable: the request gets its
    // 503 then, rather than after postgres.js's default 30 s (a refused connect fails at once).
    connect_timeout: 2,
    // Seconds before a connection that failed connects again. postgres.js's default grows with
    // every failure of the pool, to 20 s: a database back after an outage then waited that long
    // for its first statement, and statements queued meanwhile hung. A quarter of a second keeps
    // a down server's refusals cheap and a returned one used at once.
    backoff: () => 0.25,
    onnotice: () => {},
    connection: {
      search_path: options.schema,
      application_name: name,
      ...(options.role ? { role: options.role } : {}),
      ...settings,
    },
    types: {
      date: {
        to: DATE_OID,
        from: [DATE_OID],
        serialize: (value: string) => value,
        parse: (value: string) => value,
      },
    },
    debug: options.onQuery
      ? (_conn, text, parameters, types) => options.onQuery?.(text, parameters, types)
      : undefined,
  });
  endAfterReleases(pool);
  poolGauges.set(pool, poolGauge(name));
  traceStatements(pool, decodeURIComponent(new URL(url).pathname.slice(1)) || "postgres");
  return pool;
}

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The file name a migration came from, as an operator would look for it. */
export function migrationFile(migration: Migration): string {
  return `${String(migration.version).padStart(4, "0")}_${migration.name}.sql`;
}

const MIGRATION_FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** Reads `NNNN_name.sql` files from a folder, in version order; a gap or duplicate is refused. */
export async function readMigrations(dir: URL): Promise<Migration[]> {
  // Without a trailing slash, relative URLs would resolve against the parent folder.
  if (!dir.pathname.endsWith("/")) dir = new URL(`${dir.href}/`);
  const migrations: Migration[] = [];
  // A service without tables of its own yet has no folder; it still gets the platform track.
  const exists = await Deno.stat(dir).then(() => true, () => false);
  if (!exists) return migrations;
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.isFile || !entry.name.endsWith(".sql")) continue;
    const match = entry.name.match(MIGRATION_FILE);
    if (!match) throw new Error(`Migration file "${entry.name}" is not named NNNN_name.sql`);
    migrations.push({
      version: Number(match[1]),
      name: match[2]!,
      sql: await Deno.readTextFile(new URL(entry.name, dir)),
    });
  }
  migrations.sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) {
      throw new Error(`Migrations must be numbered 0001, 0002, …; found ${m.version} at ${i + 1}`);
    }
  });
  return migrations;
}

/**
 * Applies pending migrations to a schema. A session advisory lock keyed on the schema makes
 * concurrent replicas queue up, so each file runs exactly once; each file runs in its own
 * transaction together with its bookkeeping row.
 */
export async function migrate(
  sql: Sql,
  schema: string,
  migrations: Migration[],
  logger?: Logger,
  /** Bookkeeping table: the service's own track, or the platform track shared/ owns. */
  table: MigrationTable = "schema_migrations",
): Promise<number[]> {
  return await underMigrationLock(
    sql,
    schema,
    (locked) => applyMigrations(locked, schema, migrations, logger, table),
  );
}

type MigrationTable = "schema_migrations" | "platform_migrations";

/** One connection holding the schema's migration lock while `fn` runs. */
export async function underMigrationLock<T>(
  sql: Sql,
  schema: string,
  fn: (locked: postgres.ReservedSql) => Promise<T>,
): Promise<T> {
  return await withSpan("db.migrate", { "db.schema": schema }, async () => {
    const reserved = await sql.reserve();
    const lockKey = `printshop.migrate.${schema}`;
    try {
      await reserved`SELECT pg_advisory_lock(hashtext(${lockKey}))`;
      return await fn(reserved);
    } finally {
      await reserved`SELECT pg_advisory_unlock(hashtext(${lockKey}))`.catch(() => {});
      reserved.release();
    }
  });
}

async function applyMigrations(
  reserved: postgres.ReservedSql,
  schema: string,
  migrations: Migration[],
  logger: Logger | undefined,
  table: MigrationTable,
): Promise<number[]> {
  await reserved.unsafe(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await reserved.unsafe(`CREATE TABLE IF NOT EXISTS "${schema}".${table} (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
  const rows = await reserved.unsafe<{ version: number }[]>(
    `SELECT version FROM "${schema}".${table}`,
  );
  const done = new Set(rows.map((r) => r.version));
  const applied: number[] = [];
  for (const migration of migrations) {
    if (done.has(migration.version)) continue;
    await reserved.unsafe("BEGIN");
    try {
      await reserved.unsafe(`SET LOCAL search_path TO "${schema}"`);
      await reserved.unsafe(migration.sql);
      await reserved.unsafe(
        `INSERT INTO "${schema}".${table} (version, name) VALUES ($1, $2)`,
        [migration.version, migration.name],
      );
      await reserved.unsafe("COMMIT");
    } catch (error) {
      await reserved.unsafe("ROLLBACK");
      throw new Error(
        `Migration ${schema}/${table === "platform_migrations" ? "platform/" : ""}${
          migrationFile(migration)
        } failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    applied.push(migration.version);
    logger?.info("migration applied", { schema, table, version: migration.version });
  }
  return applied;
}

/**
 * Tables every service schema has, whose shape shared/ owns (the outbox): applied to each
 * service's schema on its own track, before the service's migrations.
 */
export const PLATFORM_MIGRATIONS: URL = new URL("./platform_migrations/", import.meta.url);

export interface OpenOptions extends Omit<ConnectOptions, "schema"> {
  /** Whether the schema gets the platform track (the outbox); yes unless said otherwise. */
  platform?: boolean;
  /**
   * Where the migrations run: the owner role's URL (MIGRATION_DATABASE_URL). Its pool lives as
   * long as the migrations and the tenancy pass after them. Unset, they run on `url`'s role.
   */
  migrationUrl?: string;
  /** Whether this pool is the one the process's database watch probes; yes unless said. */
  watch?: boolean;
  /**
   * `apply` (the default): run what is pending at start. `verify`: only check that every
   * migration was applied, and refuse to start otherwise: where a revision's migrations run once
   * before it serves (Deno Deploy's pre-deploy command), an instance's cold start runs none.
   */
  migrations?: "apply" | "verify";
}

/**
 * Connects and migrates in one step, as every process entry point does at start: the migrations
 * and then the tenancy pass (tenancy.ts) run as the owner, under the migration lock, and the pool
 * returned is the runtime role's.
 */
export async function openDatabase(
  url: string,
  schema: string,
  migrationsDir: URL,
  logger?: Logger,
  options: OpenOptions = {},
): Promise<Sql> {
  const { platform = true, migrationUrl, watch = true, migrations = "apply", ...connectOptions } =
    options;
  const sql = connect(url, { ...connectOptions, schema });
  const tracks: { table: MigrationTable; dir: URL }[] = [
    ...(platform ? [{ table: "platform_migrations" as const, dir: PLATFORM_MIGRATIONS }] : []),
    { table: "schema_migrations", dir: migrationsDir },
  ];
  if (migrations === "verify") {
    try {
      await verifyMigrations(sql, schema, tracks);
    } catch (error) {
      await sql.end({ timeout: 1 });
      throw error;
    }
    if (logger && watch) watchDatabase(() => sql`SELECT 1`, logger);
    return sql;
  }
  const owner = migrationUrl === undefined ? sql : connect(migrationUrl, {
    schema,
    max: 1,
    applicationName: `${connectOptions.applicationName ?? schema} migrations`,
  });
  try {
    await underMigrationLock(owner, schema, async (locked) => {
      for (const track of tracks) {
        await applyMigrations(locked, schema, await readMigrations(track.dir), logger, track.table);
      }
      await ensureTenancy(locked, schema);
    });
  } finally {
    if (owner !== sql) await owner.end();
  }
  if (logger && watch) watchDatabase(() => sql`SELECT 1`, logger);
  return sql;
}

/**
 * Refuses a schema whose migrations are behind this code's: one statement per track, reading the
 * highest version applied. (The tenancy pass runs with the migrations, as the owner.)
 */
async function verifyMigrations(
  sql: Sql,
  schema: string,
  tracks: { table: MigrationTable; dir: URL }[],
): Promise<void> {
  for (const track of tracks) {
    const expected = (await readMigrations(track.dir)).length;
    const [row] = await sql.unsafe<{ version: number | null }[]>(
      `SELECT max(version) AS version FROM "${schema}".${track.table}`,
    ).catch((error) => {
      // No bookkeeping table yet: nothing applied. Anything else (the server away, the login
      // refused) is the error to report, not a schema behind.
      if (error instanceof postgres.PostgresError && error.code === "42P01") {
        return [{ version: null }];
      }
      throw error;
    });
    const applied = row?.version ?? 0;
    if (applied < expected) {
      throw new Error(
        `schema "${schema}" (${track.table}) is at version ${applied}, this code needs ` +
          `${expected}: run the migrations first (deno task migrate)`,
      );
    }
  }
}

/** True when the error is a Postgres unique violation (23505). */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof postgres.PostgresError && error.code === "23505";
}

/**
 * A value for a `json`/`jsonb` parameter. postgres.js types `sql.json` with its own JSON type,
 * which a plain interface (no index signature) does not satisfy; the value is sent as it is.
 */
export function jsonParam(sql: Queryable, value: unknown): postgres.Parameter {
  return sql.json(value as Parameters<Queryable["json"]>[0]);
}

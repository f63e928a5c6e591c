/**
 * Wakes after a commit, inside this process. A pool's outbox relay asks to be woken once a write
 * on that pool that recorded an event has committed (`wakeAfterCommits`), and a writer that is
 * promised this (`wakeAfterCommit`) sends no NOTIFY.
 *
 * Why not NOTIFY every time: PostgreSQL signals every backend that LISTENs in the database at
 * each commit that notified, whatever channel it listens on (async.c, SignalBackends), and each
 * wakes to read the queue. A stack has eight such backends (each process's relay, the bus
 * consumers, the delivery and mail workers), so each created quote cost eight signals sent, eight
 * processes woken and their context switches: a tenth of PostgreSQL's CPU under the 16-writer
 * create load (README "Waking the relay").
 *
 * A transaction (db/mod.ts `transaction`) or a one-statement write (`oneStatement`) opens a scope
 * on what it writes through; the writer asks inside it, and the pool's wake runs once that write
 * has committed, never after a rollback. Where no scope is open (a write of postgres.js's own
 * `sql.begin`, a pool with no relay in this process), the writer is told no and notifies.
 */

type Wake = () => void;

/** A write in progress: whether an event asked for its pool's wakes. */
export interface CommitScope {
  readonly wakes: readonly Wake[];
  asked: boolean;
}

/**
 * The relays' wakes of each pool, in this process (one, unless a test starts more). Replaced, not
 * changed, when one is added or taken back: a write's scope keeps the list it opened with, without
 * a copy per write.
 */
const wakes = new WeakMap<object, readonly Wake[]>();
/** The open write of each transaction connection, or of a pinned pool while its statement is built. */
const scopes = new WeakMap<object, CommitScope>();

/**
 * Registers `wake` to run after each committed write on `pool` that recorded an event; answers
 * the call that takes it back.
 */
export function wakeAfterCommits(pool: object, wake: Wake): () => void {
  wakes.set(pool, [...(wakes.get(pool) ?? []), wake]);
  let registered = true;
  return () => {
    if (!registered) return;
    registered = false;
    // One registration: the same wake registered twice stays once.
    const now = [...(wakes.get(pool) ?? [])];
    now.splice(now.indexOf(wake), 1);
    wakes.set(pool, now);
  };
}

/**
 * Opens the scope of a write on `pool` that statements reach through `via` (a transaction's
 * connection, or a pinned pool while one statement is built); null when nothing on the pool asks
 * to be woken.
 */
export function openCommitScope(pool: object, via: object): CommitScope | null {
  const registered = wakes.get(pool);
  if (!registered?.length) return null;
  const scope: CommitScope = { wakes: registered, asked: false };
  scopes.set(via, scope);
  return scope;
}

/** Closes the scope opened on `via`: writers asking there from now on are told no. */
export function closeCommitScope(via: object, scope: CommitScope | null): void {
  if (scope && scopes.get(via) === scope) scopes.delete(via);
}

/** The write committed: its pool's wakes run if an event asked for them. */
export function committed(scope: CommitScope | null): void {
  if (scope?.asked) { for (const wake of scope.wakes) wake(); }
}

/**
 * Whether the relay of `tx`'s pool will be woken in this process once the write `tx` belongs to
 * has committed; asking is what arranges it. False: the caller must wake it itself (NOTIFY).
 */
export function wakeAfterCommit(tx: object): boolean {
  const scope = scopes.get(tx);
  if (!scope) return false;
  scope.asked = true;
  return true;
}

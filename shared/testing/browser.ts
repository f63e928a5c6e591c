/**
 * A real browser for tests that drive a page: Debian's Chromium through playwright-core.
 *
 * `npx playwright install` cannot be used here (it downloads a browser build from outside the
 * package registries), so the browser is the distribution's own `/usr/bin/chromium`, which
 * `deno task test` installs with apt-get when it runs as root. Without it a browser test fails
 * with one line naming the command to run: it never passes silently.
 *
 * Import it as `@printshop/shared/testing/browser`, not through `@printshop/shared/testing`: most
 * tests never open a page and should not load playwright-core.
 */
import { fileURLToPath } from "node:url";
import type { BrowserContext, Page } from "playwright-core";

export type { BrowserContext, Page } from "playwright-core";

/** Where Debian's `chromium` package puts its launcher. */
export const CHROMIUM_PATH = "/usr/bin/chromium";

/**
 * Flags known to work for page tests on these machines (environment notes, "Browsers"): no
 * sandbox because tests run as root in a container, no GPU there, and no background traffic or
 * first-run work, since the only network is the package registries and loopback.
 */
export const CHROMIUM_FLAGS: readonly string[] = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
];

/** Graceful close is waited for this long before the browser's processes are killed. */
const CLOSE_TIMEOUT_MS = 10_000;
/** Launch on a busy 2-core machine can take seconds; a hang still fails within a minute. */
const LAUNCH_TIMEOUT_MS = 60_000;

const REPO_ROOT = new URL("../../", import.meta.url);

/** The one line a test run prints, and a browser test fails with, when Chromium is missing. */
export function chromiumMissingMessage(): string {
  return `Chromium is not installed (${CHROMIUM_PATH}): run "apt-get update && apt-get install -y chromium" as root (deno task test does it by itself when run as root)`;
}

export interface Viewport {
  width: number;
  height: number;
}

/** One running Chromium with a profile of its own; `close()` ends it and removes its files. */
export interface BrowserSession {
  /** The browser's only context (a user data dir makes it a persistent one). */
  context: BrowserContext;
  /** A new tab whose viewport is `viewport` (CSS pixels; screenshots are this size). */
  newPage(viewport: Viewport): Promise<Page>;
  /** Closes the browser, kills whatever of it is left, removes its temporary folder. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts Chromium with a fresh profile in a temporary folder under TMPDIR (the test runner
 * removes that folder at the end, so nothing lands in /var/tmp). Throws with
 * `chromiumMissingMessage()` when Chromium is not installed.
 */
export async function launchBrowser(): Promise<BrowserSession> {
  if (!await exists(CHROMIUM_PATH)) throw new Error(chromiumMissingMessage());
  // Loaded here rather than at the top so that importing this module for its constants (the test
  // runner does) does not load playwright-core.
  const { chromium } = await import("playwright-core");
  const tempDir = await Deno.makeTempDir({ prefix: "printshop-browser-" });
  const profileDir = `${tempDir}/profile`;
  let context: BrowserContext;
  try {
    // playwright refuses `--user-data-dir` in `args` and takes the folder here instead: that is
    // what makes the context persistent (one context per browser, closed with the browser).
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM_PATH,
      args: [...CHROMIUM_FLAGS],
      // Downloads, traces and the like would otherwise go to a folder of playwright's own.
      artifactsDir: `${tempDir}/artifacts`,
      timeout: LAUNCH_TIMEOUT_MS,
    });
  } catch (error) {
    await killProfileProcesses(profileDir);
    await removeSingletonDir(profileDir);
    await Deno.remove(tempDir, { recursive: true }).catch(() => {});
    throw error;
  }

  let closed: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        await Promise.race([
          context.close(),
          new Promise<void>((resolve) => timer = setTimeout(resolve, CLOSE_TIMEOUT_MS)),
        ]);
      } catch {
        // A browser that already died cannot be closed; what is left of it is killed below.
      } finally {
        clearTimeout(timer);
      }
      await killProfileProcesses(profileDir);
      await removeSingletonDir(profileDir);
      await Deno.remove(tempDir, { recursive: true }).catch(() => {});
    })();
    return closed;
  };

  return {
    context,
    newPage: async (viewport: Viewport): Promise<Page> => {
      const page = await context.newPage();
      await page.setViewportSize(viewport);
      return page;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * Where tests keep screenshots: `TEST_ARTEFACTS_DIR` if set, else `test-artefacts/` at the repo
 * root (git-ignored). Not under TMPDIR, which the test runner removes when the run ends.
 */
export async function artefactDir(): Promise<string> {
  const dir = Deno.env.get("TEST_ARTEFACTS_DIR") ||
    fileURLToPath(new URL("test-artefacts/", REPO_ROOT));
  await Deno.mkdir(dir, { recursive: true });
  return dir;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/**
 * Kills the browser started with this profile, with its process group (playwright starts it as
 * a group leader, its helpers inside): a close that timed out, or a browser that hung, must not
 * outlive the test. The profile folder is unique, so its path names exactly this browser.
 */
async function killProfileProcesses(profileDir: string): Promise<void> {
  const flag = `--user-data-dir=${profileDir}`;
  const pids: number[] = [];
  try {
    for await (const entry of Deno.readDir("/proc")) {
      const pid = Number(entry.name);
      if (!Number.isInteger(pid)) continue;
      const cmdline = await Deno.readTextFile(`/proc/${pid}/cmdline`).catch(() => "");
      if (cmdline.split("\0").includes(flag)) pids.push(pid);
    }
  } catch {
    return; // no /proc to look through
  }
  for (const pid of pids) {
    for (const target of [-pid, pid]) {
      try {
        Deno.kill(target, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
}

/**
 * Chromium keeps its single-instance socket in a folder of its own under TMPDIR, linked from the
 * profile; it removes it on a clean exit only, so after a kill it is removed here. The link names
 * exactly this browser's folder.
 */
async function removeSingletonDir(profileDir: string): Promise<void> {
  const socket = await Deno.readLink(`${profileDir}/SingletonSocket`).catch(() => null);
  const dir = socket?.replace(/\/SingletonSocket$/, "");
  if (dir && /\/org\.chromium\.Chromium\.\w+$/.test(dir)) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

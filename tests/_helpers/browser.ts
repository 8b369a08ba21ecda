/**
 * A headless browser for the tests of `niceeval view` (issue 17): the HTML report opened from a
 * `file:` URL, with every console error, uncaught page error and network request recorded.
 *
 * ```ts
 * const available = await browserAvailable();
 * const report = "file:///tmp/report.html";
 * Deno.test({ name: "…", ignore: !available, fn: async () => {
 *   await using browser = await launchBrowser();
 *   const view = await browser.open(report, { width: 1280, height: 800 });
 *   await view.waitReady("overview");
 *   view.assertClean();
 * } });
 * ```
 *
 * A missing browser prints one line to stderr and the file's tests register as ignored; with
 * `NICEEVAL_REQUIRE_BROWSER=1` (as in CI, `.ci/run`) it throws, so the file fails. The browser is
 * `/usr/bin/chromium` unless `NICEEVAL_CHROMIUM` names another; `scripts/ci/chromium.sh`
 * installs it. Nothing is ever downloaded.
 */
import { join } from "node:path";
import puppeteer, { type Browser, type HTTPRequest, type Page } from "puppeteer-core";

/** The browser used when `NICEEVAL_CHROMIUM` is unset. */
export const DEFAULT_CHROMIUM = "/usr/bin/chromium";

/** URL schemes a self-contained report may load; anything else is a network request. */
const LOCAL_SCHEMES = new Set(["file:", "data:", "about:", "blob:"]);

/**
 * Flags that keep the browser headless, sandbox-free (root in CI) and off every outside host.
 * The profile directory is added per launch.
 */
const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** How long a wait may take before a hang counts as a failure. */
const WAIT_LIMIT_MS = 30_000;

/** The result of looking for the browser. */
export interface BrowserAvailability {
  readonly ok: boolean;
  /** The executable that was looked for. */
  readonly executable: string;
  /** Why the browser counts as absent; empty when `ok`. */
  readonly reason: string;
}

/** Seams for testing the helper itself; production calls pass nothing. */
export interface BrowserAvailabilityOptions {
  readonly env?: (name: string) => string | undefined;
  readonly writeStderr?: (line: string) => void | Promise<void>;
}

let memo: Promise<BrowserAvailability> | undefined;

/**
 * Looks for the browser once per test file (memoized without options). Absent, it prints the
 * skip line, or throws when `NICEEVAL_REQUIRE_BROWSER=1`.
 */
export function browserAvailability(
  options?: BrowserAvailabilityOptions,
): Promise<BrowserAvailability> {
  if (options !== undefined) return checkAvailability(options);
  memo ??= checkAvailability({});
  return memo;
}

/** True when the browser tests can run; for `Deno.test({ ignore: !(await browserAvailable()) })`. */
export async function browserAvailable(): Promise<boolean> {
  return (await browserAvailability()).ok;
}

/** The line printed when the browser is missing. */
export function browserSkipLine(executable: string, reason: string): string {
  return `browser tests skipped: ${executable} ${reason} ` +
    "(install it with scripts/ci/chromium.sh or set NICEEVAL_CHROMIUM)";
}

async function checkAvailability(
  options: BrowserAvailabilityOptions,
): Promise<BrowserAvailability> {
  const env = options.env ?? ((name: string) => Deno.env.get(name));
  const executable = env("NICEEVAL_CHROMIUM") || DEFAULT_CHROMIUM;
  const reason = await executableProblem(executable);
  if (reason === "") return { ok: true, executable, reason };
  if (env("NICEEVAL_REQUIRE_BROWSER") === "1") {
    throw new Error(
      `NICEEVAL_REQUIRE_BROWSER=1 but the browser ${executable} ${reason}; ` +
        "install it with scripts/ci/chromium.sh",
    );
  }
  const write = options.writeStderr ?? writeStderr;
  await write(browserSkipLine(executable, reason));
  return { ok: false, executable, reason };
}

async function executableProblem(path: string): Promise<string> {
  try {
    const info = await Deno.stat(path);
    if (!info.isFile) return "is not a file";
    if (info.mode !== null && (info.mode & 0o111) === 0) return "is not executable";
    return "";
  } catch (error) {
    return error instanceof Deno.errors.NotFound ? "is missing" : `cannot be read (${error})`;
  }
}

async function writeStderr(line: string): Promise<void> {
  await Deno.stderr.write(new TextEncoder().encode(`${line}\n`));
}

/** The size of a page's viewport in CSS pixels. */
export interface Viewport {
  readonly width: number;
  readonly height: number;
}

/** One running browser; disposing it closes every page, the browser and its profile. */
export interface BrowserSession extends AsyncDisposable {
  /** Where {@link ViewPage.screenshot} writes: `$NICEEVAL_ARTIFACTS/view` or a temp dir. */
  readonly artifacts: string;
  /** Opens `url` in a new page of the given size, recording its problems from the start. */
  open(url: string, viewport: Viewport): Promise<ViewPage>;
}

/** A page plus what it did that a self-contained report must not do. */
export interface ViewPage {
  readonly page: Page;
  /** Console messages of type error or warning, as `type: text`. */
  readonly consoleProblems: readonly string[];
  /** Uncaught exceptions and unhandled rejections of the page. */
  readonly pageErrors: readonly string[];
  /** Every request whose URL is not `file:`, `data:`, `about:` or `blob:` (each is aborted). */
  readonly requests: readonly string[];
  /** Waits until `<body data-ready="<name>">` (the page contract's render-complete mark). */
  waitReady(name: string): Promise<void>;
  /**
   * Clears the ready mark, sets `location.hash` and waits for the page `name` to be rendered,
   * so a render of the same page is not mistaken for the new one.
   */
  navigate(hash: string, name: string): Promise<void>;
  /**
   * Writes `<artifacts>/<name>.png` of the whole page, prints `screenshot: <path>` on stdout (in
   * the test's output) and returns the path.
   */
  screenshot(name: string): Promise<string>;
  /** Throws when any console problem, page error or network request was recorded. */
  assertClean(): void;
}

/** Options of {@link launchBrowser}; the defaults read the environment. */
export interface LaunchOptions {
  readonly executable?: string;
  readonly artifacts?: string;
}

/** Starts the browser (over a pipe, not a port) with a fresh profile. */
export async function launchBrowser(options: LaunchOptions = {}): Promise<BrowserSession> {
  const executable = options.executable ?? (await browserAvailability()).executable;
  const artifacts = options.artifacts ?? await artifactDir();
  const profile = await Deno.makeTempDir({ prefix: "niceeval-chromium-profile-" });
  let browser: Browser;
  try {
    browser = await puppeteer.launch({
      executablePath: executable,
      pipe: true,
      headless: true,
      args: [...CHROMIUM_FLAGS, `--user-data-dir=${profile}`],
      // The test process owns the browser; the pipe closing ends it when the process dies.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      timeout: WAIT_LIMIT_MS,
    });
  } catch (error) {
    await Deno.remove(profile, { recursive: true }).catch(() => undefined);
    throw error;
  }
  return {
    artifacts,
    open: (url, viewport) => openPage(browser, artifacts, url, viewport),
    [Symbol.asyncDispose]: async () => {
      try {
        await browser.close();
      } catch {
        browser.process()?.kill("SIGKILL");
      }
      await Deno.remove(profile, { recursive: true }).catch(() => undefined);
    },
  };
}

async function artifactDir(): Promise<string> {
  const base = Deno.env.get("NICEEVAL_ARTIFACTS");
  if (base === undefined || base === "") {
    return await Deno.makeTempDir({ prefix: "niceeval-view-shots-" });
  }
  const dir = join(base, "view");
  await Deno.mkdir(dir, { recursive: true });
  return dir;
}

function isLocal(url: string): boolean {
  try {
    return LOCAL_SCHEMES.has(new URL(url).protocol);
  } catch {
    return false;
  }
}

async function openPage(
  browser: Browser,
  artifacts: string,
  url: string,
  viewport: Viewport,
): Promise<ViewPage> {
  const page = await browser.newPage();
  const consoleProblems: string[] = [];
  const pageErrors: string[] = [];
  const requests: string[] = [];
  page.on("console", (message) => {
    const type = message.type();
    if (type === "error" || type === "warn") consoleProblems.push(`${type}: ${message.text()}`);
  });
  page.on("pageerror", (error) => {
    pageErrors.push(error instanceof Error ? error.stack ?? error.message : String(error));
  });
  await page.setRequestInterception(true);
  page.on("request", (request: HTTPRequest) => {
    if (request.isInterceptResolutionHandled()) return;
    if (isLocal(request.url())) {
      void request.continue();
    } else {
      requests.push(`${request.method()} ${request.url()}`);
      void request.abort("blockedbyclient");
    }
  });
  // WebSockets bypass request interception; the protocol still reports their creation.
  const cdp = await page.createCDPSession();
  await cdp.send("Network.enable");
  cdp.on("Network.webSocketCreated", (event) => {
    if (!isLocal(event.url)) requests.push(`WebSocket ${event.url}`);
  });
  await page.setViewport({ width: viewport.width, height: viewport.height });
  await page.goto(url, { waitUntil: "load", timeout: WAIT_LIMIT_MS });
  const waitReady = async (name: string): Promise<void> => {
    await page.waitForSelector(`body[data-ready="${name}"]`, { timeout: WAIT_LIMIT_MS });
  };
  return {
    page,
    consoleProblems,
    pageErrors,
    requests,
    waitReady,
    navigate: async (hash, name) => {
      // A string, as the tests type-check without the DOM library.
      await page.evaluate(
        `document.body.removeAttribute("data-ready"); location.hash = ${JSON.stringify(hash)};`,
      );
      await waitReady(name);
    },
    screenshot: async (name) => {
      const path = join(artifacts, `${name.replace(/[^A-Za-z0-9._-]+/g, "_")}.png`);
      await page.screenshot({ path: path as `${string}.png`, fullPage: true });
      await Deno.stdout.write(new TextEncoder().encode(`screenshot: ${path}\n`));
      return path;
    },
    assertClean: () => {
      const lines = [
        ...consoleProblems.map((line) => `console ${line}`),
        ...pageErrors.map((line) => `page error: ${line}`),
        ...requests.map((line) => `network request: ${line}`),
      ];
      if (lines.length > 0) {
        throw new Error(`the page at ${url} is not clean:\n  ${lines.join("\n  ")}`);
      }
    },
  };
}

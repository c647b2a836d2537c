// A Chromium from the npm registry, for the end-to-end tests on a Linux x64 machine that has no other.
//
// Playwright downloads its own browser from a CDN, which a machine that reaches only the npm registry
// cannot do, and a fresh machine has no system Chromium. The devDependency `@sparticuz/chromium` carries
// a brotli-compressed Chromium headless shell for Linux x64 (built for AWS Lambda), with the few shared
// libraries a bare Linux lacks (NSS, NSPR, expat: its "al2023" layer), a font and SwiftShader. With
// those, the binary needs nothing from the system but glibc 2.25 or later and libgcc_s.so.1, which any
// machine that runs Node has.
//
// It is unpacked once, at first use, into node_modules/.cache/registry-chromium/<version>/ (about
// 215 MB; a fresh `npm install` starts over):
//   chromium                      the binary; SwiftShader's libraries beside it, where it looks for them
//   lib/                          the shared libraries, for LD_LIBRARY_PATH
//   fonts/fonts/, fonts.conf      the package's font, and a fontconfig file that points at it
// Playwright launches it through `executablePath` with the environment of registryChromiumEnv(), which
// playwright.config.ts adds for a binary unpacked here.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

const PACKAGE_DIR = path.resolve("node_modules/@sparticuz/chromium");
const CACHE_DIR = path.resolve("node_modules/.cache/registry-chromium");
/** Written last, inside the folder, so a folder that has it was unpacked whole. */
const MARKER = "registry-chromium.json";

/** Whether this machine can run the packaged Chromium: the package ships a Linux x64 binary only. */
export function registryChromiumSupported(platform: string = process.platform, arch: string = process.arch): boolean {
  return platform === "linux" && arch === "x64";
}

/** The path of the unpacked binary, unpacking it first when needed; undefined where there is none. */
export async function registryChromium(): Promise<string | undefined> {
  if (!registryChromiumSupported() || !existsSync(path.join(PACKAGE_DIR, "package.json"))) return undefined;
  const { version } = JSON.parse(readFileSync(path.join(PACKAGE_DIR, "package.json"), "utf8")) as { version: string };
  const dir = path.join(CACHE_DIR, version);
  if (!existsSync(path.join(dir, MARKER))) await unpack(dir, version);
  return path.join(dir, "chromium");
}

async function unpack(dir: string, version: string): Promise<void> {
  const started = performance.now();
  console.log(`[test] unpacking the registry's Chromium (@sparticuz/chromium ${version}) into ${path.relative(process.cwd(), dir)}`);
  // Another run may be unpacking at the same moment (two suites side by side): each unpacks into a
  // folder of its own and renames it into place, so nobody ever launches a half-written binary.
  const staging = `${dir}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  if (!existsSync(path.join(dir, MARKER))) rmSync(dir, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const { inflate } = await import("@sparticuz/chromium");
  // The package's inflate() unpacks into os.tmpdir() (Lambda's /tmp), which reads TMPDIR at each call:
  // pointing it at our staging folder keeps the browser out of a /tmp shared with other users and
  // other versions (the package would reuse any /tmp/chromium it finds).
  const savedTmpdir = process.env.TMPDIR;
  process.env.TMPDIR = staging;
  try {
    const bin = path.join(PACKAGE_DIR, "bin");
    await Promise.all(["chromium.br", "al2023.tar.br", "fonts.tar.br", "swiftshader.tar.br"].map((file) => inflate(path.join(bin, file))));
  } finally {
    if (savedTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmpdir;
  }
  renameSync(path.join(staging, "al2023", "lib"), path.join(staging, "lib"));
  rmSync(path.join(staging, "al2023"), { recursive: true, force: true });
  // The package's own fonts.conf names Lambda's folders (/tmp/fonts); ours names where the font is.
  writeFileSync(
    path.join(staging, "fonts.conf"),
    [
      '<?xml version="1.0"?>',
      '<!DOCTYPE fontconfig SYSTEM "fonts.dtd">',
      "<fontconfig>",
      `  <dir>${path.join(dir, "fonts", "fonts")}</dir>`,
      `  <cachedir>${path.join(dir, "fonts-cache")}</cachedir>`,
      "</fontconfig>",
      "",
    ].join("\n"),
  );
  writeFileSync(path.join(staging, MARKER), JSON.stringify({ package: "@sparticuz/chromium", version }, null, 2));
  try {
    renameSync(staging, dir);
  } catch (error) {
    // Another run finished first: its folder is as good as ours.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(path.join(dir, MARKER))) throw error;
  }
  console.log(`[test] unpacked in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * The environment the browser needs when `executablePath` is a Chromium unpacked here: its shared
 * libraries and its fonts. Undefined for any other browser, which runs with the environment as it is.
 */
export function registryChromiumEnv(executablePath: string | undefined, env: Record<string, string | undefined> = process.env): Record<string, string> | undefined {
  if (!executablePath) return undefined;
  const dir = path.dirname(path.resolve(executablePath));
  if (!existsSync(path.join(dir, MARKER))) return undefined;
  const inherited = Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const libraries = [path.join(dir, "lib"), ...(env.LD_LIBRARY_PATH ? [env.LD_LIBRARY_PATH] : [])].join(":");
  return { ...inherited, LD_LIBRARY_PATH: libraries, FONTCONFIG_PATH: dir };
}

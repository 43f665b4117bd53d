// Headless Chromium for the browser tests (Playwright's driver, the system's Chromium from apt): one launch, the same
// flags everywhere — no sandbox (CI containers), no GPU, and nothing that calls home.
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launches the system Chromium with Playwright's `chromium` (as each test imports it). */
export function launchChromium(chromium) {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: ARGS });
}

/**
 * What a sandboxed command is told when it has no network at all (no `--sandbox-network`, no allowed
 * host): package managers fail at once instead of retrying a network that is not there. npm waits out its
 * fetch retries (about 70 s a command with its defaults), pip five retries with back-off; a check that
 * fails for want of network should fail in a second, its output saying so (plans/offline-evidence.ts
 * names the fix). Offline modes keep what works without the network working: npm and uv install from
 * their caches, cargo from its registry cache, Go from its module cache.
 */
export const OFFLINE_ENV: Readonly<Record<string, string>> = {
  CARGO_NET_OFFLINE: 'true',
  GOPROXY: 'off',
  PIP_RETRIES: '0',
  UV_OFFLINE: '1',
  YARN_ENABLE_OFFLINE_MODE: '1',
  npm_config_fetch_retries: '0',
  npm_config_offline: 'true',
}

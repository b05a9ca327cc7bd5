/**
 * A check that failed for want of the network says so. Its commands run in the sandbox, which has no
 * network unless the approval opened it (a host through the proxy, or all of it): a test that needs an
 * uninstalled package, or an install inside a check, fails with npm's ENOTCACHED, a resolver's EAI_AGAIN,
 * pip's "Failed to establish a new connection", words that name no fix. The note names both: install the
 * dependencies before wave runs, or let the sandbox reach the registry.
 */
import type {SandboxSettings} from '../base/process/sandbox.js'

/** What package managers and resolvers print when a host cannot be reached. */
const NO_NETWORK =
  /\bENOTCACHED\b|only-if-cached|\bEAI_AGAIN\b|\bENOTFOUND\b|\bENETUNREACH\b|Temporary failure in name resolution|Could not resolve host|Network is unreachable|Failed to establish a new connection|No matching distribution found|network is disabled/

/** The words a check's evidence ends with when it failed where the sandbox had no network. */
export const OFFLINE_NOTE =
  "(wave: this check failed for want of the network: its commands run in the sandbox, which has none. Install the project's dependencies before wave runs (the CI's install-command, WAVE_INSTALL_COMMAND in the GitLab recipe), or let the sandbox reach the registry (sandbox-network-allow, e.g. registry.npmjs.org; --sandbox-network-allow when approving).)"

/** Watches one check's output as it arrives; `note` says whether its failure was the network's. */
export class OfflineWatch {
  private seen = false
  private carry = ''
  private readonly offline: boolean

  constructor(sandbox: SandboxSettings | undefined) {
    // Absent settings are the default sandbox: enabled, no network.
    this.offline = !sandbox || (sandbox.enabled !== false && !sandbox.network && !sandbox.networkAllow?.length) || sandbox.throwaway === true
  }

  observe(text: string): void {
    if (this.seen || !this.offline) return
    // A chunk may end inside the words: the last line's start is looked at again with the next chunk.
    const seen = this.carry + text
    this.seen = NO_NETWORK.test(seen)
    this.carry = seen.slice(-200)
  }

  note(exitCode: number | null): string | undefined {
    return this.seen && exitCode !== 0 ? OFFLINE_NOTE : undefined
  }
}

/**
 * wave's home directory: `$WAVE_HOME`, default `~/.wave`. It holds the user's settings file and, unless
 * the settings choose another place, the plans directory. A module of its own because both settings.ts
 * (where the user's file is) and plans (where plans go, which the settings may choose) need it.
 */
import {homedir} from 'node:os'
import path from 'node:path'

export function waveHome(): string {
  return process.env.WAVE_HOME ? path.resolve(process.env.WAVE_HOME) : path.join(homedir(), '.wave')
}

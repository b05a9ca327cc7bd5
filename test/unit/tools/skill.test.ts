/** The Skill tool's listing: Claude Code's shape, within the size budget, the rest by name. */
import {describe, expect, it} from 'vitest'

import {skillListing} from '../../../src/tools/skill.js'
import type {Skill} from '../../../src/tools/skills/catalog.js'

const skill = (name: string, description = `What ${name} does`): Skill => ({
  body: '# body',
  description,
  dir: `/skills/${name}`,
  file: `/skills/${name}/SKILL.md`,
  location: 'project',
  name,
})

describe('skillListing', () => {
  it('lists each skill with its name, description and location', () => {
    const {description, nameOnly} = skillListing([skill('deploy'), skill('lint')])
    expect(nameOnly).toEqual([])
    expect(description).toContain(
      '<skill>\n<name>\ndeploy\n</name>\n<description>\nWhat deploy does\n</description>\n<location>\nproject\n</location>\n</skill>',
    )
    expect(description).toContain('<name>\nlint\n</name>')
  })

  it('past the budget, the rest are listed by name only, in order', () => {
    const skills = Array.from({length: 30}, (_, i) => skill(`skill-${i}`, 'x'.repeat(500)))
    const {description, nameOnly} = skillListing(skills, 2000)
    expect(nameOnly.length).toBeGreaterThan(25)
    expect(nameOnly[0]).toBe(`skill-${30 - nameOnly.length}`)
    expect(description).toContain(`invoke by name): ${nameOnly.join(', ')}`)
    expect(description.length).toBeLessThan(2000 + 2000)
  })
})

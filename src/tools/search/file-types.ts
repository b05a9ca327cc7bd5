/**
 * Grep's `type` (ripgrep's `--type`): a name standing for the file-name globs of a language or format,
 * as ripgrep's built-in type list defines them (`rg --type-list`), for the types models ask for.
 */
import {globMatcher} from './glob-matcher.js'

const FILE_TYPES: Readonly<Record<string, readonly string[]>> = {
  asm: ['*.asm', '*.s', '*.S'],
  c: ['*.[chH]', '*.[chH].in', '*.cats'],
  clojure: ['*.clj', '*.cljc', '*.cljs', '*.cljx'],
  cmake: ['*.cmake', 'CMakeLists.txt'],
  cpp: ['*.[ChH]', '*.cc', '*.[ch]pp', '*.[ch]xx', '*.hh', '*.inl', '*.[ChH].in', '*.cc.in', '*.[ch]pp.in', '*.[ch]xx.in', '*.hh.in'],
  cs: ['*.cs'],
  csharp: ['*.cs'],
  css: ['*.css', '*.scss'],
  csv: ['*.csv'],
  dart: ['*.dart'],
  docker: ['*Dockerfile*'],
  elixir: ['*.ex', '*.eex', '*.exs', '*.heex', '*.leex', '*.livemd'],
  erlang: ['*.erl', '*.hrl'],
  go: ['*.go'],
  gradle: ['*.gradle', '*.gradle.kts'],
  graphql: ['*.graphql', '*.graphqls'],
  haskell: ['*.hs', '*.lhs', '*.cpphs', '*.c2hs', '*.hsc'],
  html: ['*.htm', '*.html', '*.ejs'],
  java: ['*.java', '*.jsp', '*.jspx', '*.properties'],
  js: ['*.js', '*.jsx', '*.vue', '*.cjs', '*.mjs'],
  json: ['*.json', 'composer.lock', '*.sarif'],
  jsonl: ['*.jsonl'],
  julia: ['*.jl'],
  kotlin: ['*.kt', '*.kts'],
  less: ['*.less'],
  lua: ['*.lua'],
  make: ['[Gg][Nn][Uu]makefile', '[Mm]akefile', '[Gg][Nn][Uu]makefile.am', '[Mm]akefile.am', '[Gg][Nn][Uu]makefile.in', '[Mm]akefile.in', '*.mk', '*.mak'],
  markdown: ['*.markdown', '*.md', '*.mdown', '*.mdwn', '*.mkd', '*.mkdn', '*.mdx'],
  md: ['*.markdown', '*.md', '*.mdown', '*.mdwn', '*.mkd', '*.mkdn', '*.mdx'],
  nix: ['*.nix'],
  objc: ['*.h', '*.m'],
  ocaml: ['*.ml', '*.mli', '*.mll', '*.mly'],
  perl: ['*.perl', '*.pl', '*.PL', '*.plh', '*.plx', '*.pm', '*.t'],
  php: ['*.php', '*.php3', '*.php4', '*.php5', '*.php7', '*.php8', '*.pht', '*.phtml'],
  proto: ['*.proto'],
  ps: ['*.cdxml', '*.ps1', '*.ps1xml', '*.psd1', '*.psm1'],
  py: ['*.py', '*.pyi'],
  python: ['*.py', '*.pyi'],
  r: ['*.R', '*.r', '*.Rmd', '*.Rnw'],
  ruby: ['Gemfile', '*.gemspec', '.irbrc', 'Rakefile', '*.rb'],
  rust: ['*.rs'],
  sass: ['*.sass', '*.scss'],
  scala: ['*.scala', '*.sbt'],
  sh: ['*.bash', '*.bashrc', '.bash_*', '*.csh', '.cshrc', '*.ksh', '*.sh', '.zlogin', '.zlogout', '.zprofile', '.zshenv', '.zshrc', '*.zsh'],
  sql: ['*.sql', '*.psql'],
  svelte: ['*.svelte'],
  swift: ['*.swift'],
  terraform: ['*.tf', '*.tf.json', '*.tfvars'],
  tf: ['*.tf', '*.tf.json', '*.tfvars'],
  toml: ['*.toml', 'Cargo.lock'],
  ts: ['*.ts', '*.tsx', '*.cts', '*.mts'],
  txt: ['*.txt'],
  typescript: ['*.ts', '*.tsx', '*.cts', '*.mts'],
  vue: ['*.vue'],
  xml: ['*.xml', '*.xml.dist', '*.dtd', '*.xsl', '*.xslt', '*.xsd', '*.xjb', '*.rng', '*.sch', '*.xhtml'],
  yaml: ['*.yaml', '*.yml'],
  zig: ['*.zig'],
}

/** The names `type` takes. */
export const FILE_TYPE_NAMES: readonly string[] = Object.keys(FILE_TYPES)

/** A test of a file's base name for the type, or undefined for a type ripgrep's list does not hold (here). */
export function fileTypeMatcher(type: string): ((name: string) => boolean) | undefined {
  if (!Object.hasOwn(FILE_TYPES, type)) return undefined
  let test = compiled.get(type)
  if (!test) {
    const tests = FILE_TYPES[type].map((glob) => globMatcher(glob))
    test = (name) => tests.some((matches) => matches(name))
    compiled.set(type, test)
  }

  return test
}

const compiled = new Map<string, (name: string) => boolean>()

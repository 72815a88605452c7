import { REASONS, type ProtectedFamily } from './protected-reasons.ts';

/**
 * Security: the config files of the formatters, linters, test runners, bundlers, task runners,
 * toolchains and package managers of each language ecosystem: what decides which code is
 * installed, built and run next. Each family names the documentation its names come from (see
 * `protected.ts`); many JavaScript tools also read the general forms (".<name>rc*",
 * "<name>.config.*"), which the first family covers for any tool.
 */
export const BUILD_FAMILIES: readonly ProtectedFamily[] = [
  {
    family: 'JavaScript and TypeScript linters and formatters',
    source: 'the config files ESLint (flat and legacy), Prettier, stylelint (cosmiconfig search places), markdownlint and markdownlint-cli2, and dprint (whose plugins are downloaded and run) document',
    reason: REASONS.editorRuns,
    globs: ['eslint.config.*', '.eslintrc*', 'prettier.config.*', '.prettierrc*', 'stylelint.config.*', '.stylelintrc*', '.markdownlint{,-cli2}.{js,cjs,mjs,json,jsonc,yaml,yml}', '{.,}dprint.json'],
  },
  {
    family: 'JavaScript and TypeScript compilers, bundlers and frameworks',
    source: 'the config files Babel, PostCSS (postcss-load-config), Tailwind CSS, webpack, Rollup, Vite, Rspack, tsup, Parcel, SWC, Next.js, Nuxt, Astro, SvelteKit, Vue CLI, Gatsby and the Angular CLI (angular.json builders) document',
    reason: REASONS.executableConfig,
    globs: [
      'babel.config.*', '.babelrc*', 'postcss.config.*', '.postcssrc*', 'tailwind.config.*', 'webpack.config.*', 'rollup.config.*', 'vite.config.*', 'rspack.config.*', 'tsup.config.*',
      '.parcelrc', '.swcrc', 'next.config.*', 'nuxt.config.*', 'astro.config.*', 'svelte.config.*', 'vue.config.*', 'gatsby-{config,node}.*', 'angular.json',
    ],
  },
  {
    family: 'JavaScript and TypeScript test runners',
    source: 'the config files Jest, Vitest, Playwright, Cypress, Karma, WebdriverIO, AVA, Mocha, Jasmine and Storybook document',
    reason: REASONS.editorRuns,
    globs: ['jest.config.*', 'vitest.config.*', 'vitest.workspace.*', 'playwright.config.*', 'cypress.config.*', 'karma.conf.*', 'wdio.conf.*', 'ava.config.*', '.mocharc*', 'jasmine.json', '**/.storybook/**'],
  },
  {
    family: 'JavaScript and TypeScript package managers and runtimes',
    source: 'the manifests and config files npm (package.json, .npmrc), Yarn (.yarnrc[.yml], .yarn/releases and plugins it runs, patches), pnpm (.pnpmfile.cjs, pnpm-workspace.yaml), patch-package, Bun (bunfig.toml) and Deno (deno.json[c], import maps) document',
    reason: REASONS.installs,
    globs: [
      'package.json', '.npmrc', '.yarnrc', '.yarnrc.yml', '**/.yarn/releases/**', '**/.yarn/plugins/**', '**/.yarn/patches/**', 'patches/*.patch', '.pnpmfile.*', 'pnpm-workspace.yaml',
      '{.,}bunfig.toml', 'deno.json', 'deno.jsonc', 'import_map.json',
    ],
  },
  {
    family: 'lock files',
    source: 'the lock files npm, Yarn, pnpm, Bun, Deno, Cargo, Poetry, uv, PDM, Pipenv, Bundler, Composer, NuGet, Gradle, Nix and Mix write',
    reason: REASONS.installs,
    globs: ['*.lock', '*-lock.json', '*-lock.yaml', '*.lockb', '*.lock.json', 'npm-shrinkwrap.json', '*.lockfile'],
  },
  {
    family: 'task runners and build systems',
    source: 'the files make (GNU make\'s names), just, Task, Gulp, Grunt, Jake, Turborepo, Nx, Lerna, Rush, moon, nodemon, Bazel, Buck and Pants read; VS Code\'s Makefile Tools runs make --dry-run when a folder opens',
    reason: REASONS.tasks,
    globs: [
      'Makefile', 'GNUmakefile', '*.mk', 'Makefile.*', '{.,}justfile', '*.just', 'Taskfile*.y*ml', 'gulpfile.*', 'Gruntfile.*', 'Jakefile*', 'turbo.json', 'nx.json', 'project.json', 'lerna.json', 'rush.json',
      'moon.yml', '**/.moon/**', 'nodemon.json', 'BUILD.bazel', 'WORKSPACE.bazel', 'MODULE.bazel', '*.bzl', '.bazelversion', 'BUCK', '.buckconfig', 'pants.toml',
    ],
  },
  {
    family: 'toolchain and version managers',
    source: 'rustup (rust-toolchain[.toml]), mise and asdf (.tool-versions), nvm, nodenv, pyenv, rbenv, jenv, tfenv and their kind (.<tool>-version), SDKMAN (.sdkmanrc)',
    reason: REASONS.toolchain,
    globs: ['rust-toolchain', 'rust-toolchain.toml', '.tool-versions', '.mise.toml', 'mise.toml', '{.,}mise.*.toml', '**/.mise/**', '.*-version', '.nvmrc', '.sdkmanrc'],
  },
  {
    family: 'Python',
    source: 'the packaging files PyPA documents (pyproject.toml, setup.py, setup.cfg), pip (requirements, constraints), Pipenv, Hatch, Pixi and conda (environment.yml), the files pytest, tox, nox, mypy and pylint load plugins and code from, and the site module (sitecustomize, usercustomize)',
    reason: REASONS.installs,
    globs: [
      'pyproject.toml', 'setup.py', 'setup.cfg', 'requirements*.txt', 'constraints*.txt', 'Pipfile', 'hatch.toml', 'pixi.toml', 'environment.y*ml',
      'conftest.py', 'pytest.ini', 'tox.ini', 'noxfile.py', '{.,}mypy.ini', 'pylintrc', 'sitecustomize.py', 'usercustomize.py', 'fabfile.py', 'dodo.py',
    ],
  },
  {
    family: 'Rust',
    source: 'the files Cargo documents (Cargo.toml, build scripts, .cargo/config[.toml]), cross (Cross.toml) and cargo-make (Makefile.toml)',
    reason: REASONS.installs,
    globs: ['Cargo.toml', 'build.rs', '**/.cargo/config.toml', '**/.cargo/config', 'Cross.toml', 'Makefile.toml'],
  },
  {
    family: 'Go',
    source: 'the go command\'s go.mod and go.work (whose toolchain line makes the next go command, gopls\'s included, download and run another Go), Mage, golangci-lint (which can load plugins) and GoReleaser (hooks)',
    reason: REASONS.editorRuns,
    globs: ['go.mod', 'go.work', 'magefile.go', '**/magefiles/**', '.golangci.*', '{.,}goreleaser.y*ml'],
  },
  {
    family: 'Java, Kotlin and Scala',
    source: 'the build files Gradle (scripts, gradle.properties, version catalogs, the wrapper), Maven (pom.xml, .mvn, the wrapper), Ant, sbt (build.sbt, project/) and Tomcat document; Java extensions fetch the Gradle the wrapper names when a folder opens',
    reason: REASONS.installs,
    globs: [
      '*.gradle', '*.gradle.kts', 'gradle.properties', '*.versions.toml', '**/gradle/wrapper/**', 'gradlew', 'gradlew.bat', 'pom.xml', '**/.mvn/**', 'mvnw', 'mvnw.cmd',
      'build.xml', '*.sbt', 'project/*.scala', 'project/build.properties', 'server.xml',
    ],
  },
  {
    family: 'Ruby',
    source: 'the files Bundler (Gemfile, gemspecs, .bundle/config), Rake, RuboCop and RSpec (require options), Solargraph (plugins), Guard, Capistrano, Danger, CocoaPods, fastlane, Homebrew Bundle and Berkshelf run',
    reason: REASONS.installs,
    globs: ['Gemfile', '*.gemspec', '**/.bundle/**', 'Rakefile', '*.rake', '.rubocop.yml', '.rspec', '.solargraph.yml', 'Guardfile', 'Capfile', 'Dangerfile', 'dangerfile.*', 'Podfile', 'Fastfile', 'Pluginfile', 'Brewfile', 'Berksfile'],
  },
  {
    family: 'PHP',
    source: 'the files Composer, PHPUnit (bootstrap), PHP CS Fixer, PHPStan and Psalm (bootstrap files), Rector, Easy Coding Standard, GrumPHP and CaptainHook document',
    reason: REASONS.installs,
    globs: [
      'composer.json', 'phpunit.xml', 'phpunit.xml.dist', 'phpunit.dist.xml', '.php-cs-fixer.php', '.php-cs-fixer.dist.php', '.php_cs', '.php_cs.dist', 'phpstan.neon', 'phpstan.neon.dist', 'phpstan.dist.neon',
      'psalm.xml', 'psalm.xml.dist', 'rector.php', 'ecs.php', 'grumphp.yml', 'grumphp.yml.dist', 'captainhook.json',
    ],
  },
  {
    family: '.NET',
    source: 'the files MSBuild (project files, Directory.Build.props/targets, Directory.Packages.props), NuGet (nuget.config, packages.config), the .NET SDK (global.json, dotnet-tools.json), VSTest (.runsettings), Cake and IIS (web.config) read',
    reason: REASONS.installs,
    globs: ['*.csproj', '*.fsproj', '*.vbproj', '*.vcxproj', '*.proj', '*.targets', '*.props', 'nuget.config', 'packages.config', 'global.json', 'dotnet-tools.json', '*.runsettings', '*.cake', 'web.config'],
  },
  {
    family: 'C and C++',
    source: 'the build files CMake (and the presets VS Code\'s CMake Tools configures from when a folder opens), Meson, Autotools, SCons, Premake, xmake, Zig, Conan and vcpkg read',
    reason: REASONS.editorRuns,
    globs: [
      'CMakeLists.txt', '*.cmake', 'CMakePresets.json', 'CMakeUserPresets.json', 'meson.build', 'meson_options.txt', 'meson.options', 'configure', 'configure.ac', 'configure.in',
      'SConstruct', 'SConscript', 'premake5.lua', 'xmake.lua', 'build.zig', 'build.zig.zon', 'conanfile.{py,txt}', 'vcpkg.json', 'vcpkg-configuration.json',
    ],
  },
];

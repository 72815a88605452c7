import { REASONS, type ProtectedFamily } from './protected-reasons.ts';

/**
 * Security: what runs code outside the editor, later: CI services, git-hook managers, dev
 * environments and containers, shell start-up files, and editors other than VS Code. Each family
 * names the documentation its names come from (see `protected.ts`).
 */
export const SERVICE_FAMILIES: readonly ProtectedFamily[] = [
  {
    family: 'CI services',
    source: 'each service\'s documented pipeline files: GitHub Actions (workflows, actions, action.yml), GitLab CI, CircleCI, Azure Pipelines, Jenkins, Bitbucket Pipelines, Travis CI, Gitea and Forgejo Actions, Buildkite, Drone, Woodpecker, AppVeyor, Cirrus CI, Semaphore, Codemagic, Bitrise, TeamCity (Kotlin DSL), Google Cloud Build, AWS CodeBuild, Tekton (Pipelines as Code), SourceHut builds, Earthly, Dagger',
    reason: REASONS.runsLater,
    globs: [
      'action.y*ml', '**/.github/workflows/**', '**/.github/actions/**', '.gitlab-ci.yml', '**/.gitlab/**', '**/.circleci/**', 'azure-pipelines*.y*ml', '**/.azure-pipelines/**', '**/.azuredevops/**',
      'Jenkinsfile', 'Jenkinsfile.*', '*.jenkinsfile', 'bitbucket-pipelines.yml', '.travis.yml', '**/.gitea/**', '**/.forgejo/**', '**/.buildkite/**', 'buildkite.{yml,yaml,json}',
      '.drone.{yml,jsonnet,star}', '.woodpecker.y*ml', '**/.woodpecker/**', '{.,}appveyor.y*ml', '.cirrus.{yml,star}', '**/.semaphore/**', 'codemagic.yaml', 'bitrise.yml', '**/.teamcity/**',
      'cloudbuild.{yaml,yml,json}', 'buildspec.y*ml', '**/.tekton/**', '.build.yml', '**/.builds/**', 'Earthfile', 'dagger.json',
    ],
  },
  {
    family: 'deployment platforms',
    source: 'the build and release commands documented in Netlify\'s netlify.toml, Vercel\'s vercel.json, Fly.io\'s fly.toml, Render\'s render.yaml, and the Procfile of Heroku, Foreman and Honcho',
    reason: REASONS.runsLater,
    globs: ['netlify.toml', 'vercel.json', 'fly.toml', 'render.yaml', 'Procfile'],
  },
  {
    family: 'git-hook managers',
    source: 'each manager\'s documented config files: Husky, pre-commit, lefthook (lefthook[-local].{yml,yaml,json,jsonc,toml}, with or without a leading dot, and .lefthook/), lint-staged and commitlint (cosmiconfig), simple-git-hooks, Overcommit, Commitizen, cargo-husky, rusty-hook, and the .githooks folder people point core.hooksPath at',
    reason: REASONS.runsLater,
    globs: [
      '**/.husky/**', '.pre-commit-config.yaml', '.pre-commit-hooks.yaml', '{.,}lefthook{,-local}.{yml,yaml,json,jsonc,toml}', '**/.lefthook/**', '**/.lefthook-local/**',
      '.lintstagedrc*', 'lint-staged.config.*', '.commitlintrc*', 'commitlint.config.*', '{.,}simple-git-hooks.{js,cjs,mjs,json}', '.overcommit.yml', '.czrc', '.cz.{toml,json,yaml}', 'cz.json',
      '**/.cargo-husky/**', '{.,}rusty-hook.toml', '**/.githooks/**', '**/.git-hooks/**',
    ],
  },
  {
    family: 'dev environments and containers',
    source: 'direnv (.envrc, and files it sources), Dev Containers, Gitpod, Docker and Podman (Dockerfile, Containerfile, Compose file names, Bake), Vagrant, Tilt, Nix (flakes, nix-shell), devenv, Devbox, DDEV',
    reason: REASONS.runsLater,
    globs: [
      '.envrc*', '**/.devcontainer/**', '.devcontainer.json', '.gitpod.yml', 'Dockerfile', 'Dockerfile.*', '*.dockerfile', 'Containerfile', 'Containerfile.*',
      'docker-compose*.y*ml', 'compose.y*ml', 'compose.*.y*ml', 'docker-bake.{hcl,json}', 'Vagrantfile', 'Tiltfile', 'flake.nix', 'shell.nix', 'default.nix', 'devenv.{nix,yaml}', 'devbox.json', '**/.ddev/**',
    ],
  },
  {
    family: 'shell start-up files',
    source: 'the start-up files bash(1), zsh(1), ksh, csh/tcsh and readline read (fish reads ~/.config/fish, under the general ".config" form)',
    reason: REASONS.runsLater,
    globs: ['.bashrc', '.bash_profile', '.bash_login', '.bash_logout', '.bash_aliases', '.profile', '.zshrc', '.zshenv', '.zprofile', '.zlogin', '.zlogout', '.login', '.logout'],
  },
  {
    family: 'other editors',
    source: 'the project files JetBrains IDEs (.idea run configurations and external tools), Zed (.zed tasks and settings), Helix (.helix languages.toml), Fleet, Sublime Text (build systems), Vim and Neovim (exrc), and Emacs (directory-local variables) document',
    reason: REASONS.editorRuns,
    globs: ['**/.idea/**', '**/.zed/**', '**/.helix/**', '**/.fleet/**', '*.sublime-project', '*.sublime-build', '.exrc', '.nvim.lua', '.dir-locals.el', '.dir-locals-2.el'],
  },
];

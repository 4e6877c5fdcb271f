//! How a server the built-in table names can be installed: the ecosystem's package manager,
//! the package and its pinned version. The table only describes; installing is the job of the
//! acquisition code, which puts packages into a per-user cache and never into the project.

/// The package manager that installs a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PackageManager {
    /// The npm registry (`npm install --prefix CACHE`).
    Npm,
    /// PyPI, into a private virtual environment.
    Pip,
    /// crates.io (`cargo install --root CACHE`).
    Cargo,
    /// A Go module (`GOBIN=CACHE go install`).
    Go,
    /// A .NET tool (`dotnet tool install --tool-path CACHE`).
    Dotnet,
    /// RubyGems (`gem install --install-dir CACHE`).
    Gem,
}

/// One way to install a server: the package at a pinned version, and the programs it puts on
/// the path (the candidate's program among them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallRecipe {
    /// The package manager.
    pub manager: PackageManager,
    /// The package name as the registry spells it (`@vue/language-server`, `basedpyright`).
    pub package: String,
    /// The pinned version.
    pub version: String,
}

impl InstallRecipe {
    /// A recipe for `package` at `version` from `manager`'s registry.
    pub fn new(manager: PackageManager, package: &str, version: &str) -> Self {
        InstallRecipe {
            manager,
            package: package.to_string(),
            version: version.to_string(),
        }
    }
}

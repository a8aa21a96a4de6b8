module rimeflake.dev/bench/serve/go-snowflake

go 1.24

require github.com/bwmarrin/snowflake v0.3.0

package deps

import (
	_ "github.com/chromedp/chromedp"
	_ "github.com/jackc/pgx/v5"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/pkoukk/tiktoken-go"
	_ "github.com/pkoukk/tiktoken-go-loader"
	_ "golang.org/x/time/rate"
	_ "modernc.org/sqlite"
)

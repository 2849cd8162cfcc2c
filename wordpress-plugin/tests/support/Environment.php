<?php
/**
 * Test environment: a private MariaDB, WordPress from the tree named by WP_SOURCE (default Debian's
 * package, /usr/share/wordpress; scripts/fetch-wordpress.sh builds others) installed into a
 * temporary directory, `php -S` serving it, and a webhook receiver. Everything is torn down at exit.
 */
require_once __DIR__ . '/Multisite.php';

final class Environment {

	const SECRET      = 'whsec_dmFybmlzaC1lZGdlLXRlc3Qtc2VjcmV0LTAxMjM0NTY3';
	const NS          = 'wpt';
	const WP_SOURCE   = '/usr/share/wordpress';

	public static $dir;
	public static $wp;
	public static $socket;
	public static $wp_port;
	public static $receiver_port;
	public static $receiver_log;
	public static $receiver_control;
	private static $procs = array();
	/** @var array|null The clean site, once clean_site() started it. */
	private static $clean;
	private static $watchdog;

	/** The WordPress tree the test site is copied from: $WP_SOURCE, or Debian's package. */
	public static function wp_source() {
		$source = getenv( 'WP_SOURCE' );
		return rtrim( ( is_string( $source ) && '' !== $source ) ? $source : self::WP_SOURCE, '/' );
	}

	public static function plugin_dir() {
		return dirname( __DIR__, 2 ) . '/varnish-edge';
	}

	public static function home() {
		return 'http://127.0.0.1:' . self::$wp_port;
	}

	public static function site() {
		return '127.0.0.1:' . self::$wp_port;
	}

	public static function purger_url() {
		return 'http://127.0.0.1:' . self::$receiver_port;
	}

	/**
	 * Distinct free loopback TCP ports, from the picker every suite uses (testkit/bin/free-port.mjs).
	 *
	 * @return int[]
	 */
	public static function free_ports( int $n ): array {
		return array_map( 'intval', explode( ' ', self::run( 'node ' . escapeshellarg( dirname( __DIR__, 3 ) . '/testkit/bin/free-port.mjs' ) . ' ' . $n ) ) );
	}

	private static function run( $cmd ) {
		exec( $cmd . ' 2>&1', $out, $rc );
		if ( 0 !== $rc ) {
			throw new RuntimeException( "command failed ($rc): $cmd\n" . implode( "\n", $out ) );
		}
		return implode( "\n", $out );
	}

	private static function spawn( $name, array $cmd, array $env = array() ) {
		$log  = self::$dir . "/$name.log";
		// setsid: the server and its forked workers form one process group we can signal together.
		$proc = proc_open( array_merge( array( 'setsid' ), $cmd ), array( 0 => array( 'file', '/dev/null', 'r' ), 1 => array( 'file', $log, 'a' ), 2 => array( 'file', $log, 'a' ) ), $pipes, null, array_merge( getenv(), $env ) );
		if ( ! is_resource( $proc ) ) {
			throw new RuntimeException( "cannot start $name" );
		}
		self::$procs[ $name ] = $proc;
		self::write_pgids();
		return $proc;
	}

	/** Process groups the watchdog must end if this PHP process dies without cleaning up. */
	private static function write_pgids() {
		$pgids = array();
		foreach ( self::$procs as $proc ) {
			$pgids[] = proc_get_status( $proc )['pid'];
		}
		file_put_contents( self::$dir . '/pgids', implode( "\n", $pgids ) . "\n" );
	}

	/**
	 * A detached watchdog: when this PHP process is gone (fatal error, timeout, kill), it ends the
	 * servers started here and removes the directory.
	 */
	private static function start_watchdog() {
		$script = sprintf(
			'while kill -0 %1$d 2>/dev/null; do sleep 1; done; f=%2$s/pgids; if [ -f "$f" ]; then for g in $(cat "$f"); do kill -TERM -- -$g 2>/dev/null; done; sleep 3; for g in $(cat "$f"); do kill -KILL -- -$g 2>/dev/null; done; fi; %3$s',
			getmypid(),
			escapeshellarg( self::$dir ),
			getenv( 'VARNISH_EDGE_KEEP_TMP' ) ? 'true' : 'rm -rf ' . escapeshellarg( self::$dir )
		);
		$null = array( 'file', '/dev/null', 'a' );
		$proc = proc_open( array( 'setsid', 'bash', '-c', $script ), array( 0 => array( 'file', '/dev/null', 'r' ), 1 => $null, 2 => $null ), $pipes );
		self::$watchdog = $proc;
		if ( ! is_resource( $proc ) ) {
			throw new RuntimeException( 'cannot start the cleanup watchdog' );
		}
	}

	private static function wait_for( $what, callable $ready, $seconds = 60 ) {
		$until = microtime( true ) + $seconds;
		while ( microtime( true ) < $until ) {
			if ( $ready() ) {
				return;
			}
			usleep( 100000 );
		}
		throw new RuntimeException( "timed out waiting for $what" );
	}

	private static function port_open( $port ) {
		$fp = @fsockopen( '127.0.0.1', $port, $errno, $errstr, 0.5 );
		if ( $fp ) {
			fclose( $fp );
			return true;
		}
		return false;
	}

	/**
	 * wp-config.php constants of a test site: a database on the private MariaDB, fresh salts, debug
	 * log to a file, no HTTP beyond 127.0.0.1.
	 *
	 * @param string $db_name   Database.
	 * @param string $debug_log WP_DEBUG_LOG file.
	 * @return array<string,mixed>
	 */
	private static function site_config( $db_name, $debug_log ) {
		$config = array(
			'DB_NAME'          => $db_name,
			'DB_USER'          => 'root',
			'DB_PASSWORD'      => '',
			'DB_HOST'          => 'localhost:' . self::$socket,
			'DB_CHARSET'       => 'utf8mb4',
			'DB_COLLATE'       => '',
			'DISABLE_WP_CRON'  => true,
			'WP_DEBUG'         => true,
			'WP_DEBUG_LOG'     => $debug_log,
			'WP_DEBUG_DISPLAY' => false,
			'AUTOMATIC_UPDATER_DISABLED' => true,
			'WP_HTTP_BLOCK_EXTERNAL'     => true,
			'WP_ACCESSIBLE_HOSTS'        => '127.0.0.1',
		);
		foreach ( array( 'AUTH_KEY', 'SECURE_AUTH_KEY', 'LOGGED_IN_KEY', 'NONCE_KEY', 'AUTH_SALT', 'SECURE_AUTH_SALT', 'LOGGED_IN_SALT', 'NONCE_SALT' ) as $salt ) {
			$config[ $salt ] = bin2hex( random_bytes( 24 ) );
		}
		return $config;
	}

	/** `define()` lines for wp-config.php. */
	private static function defines( array $config ) {
		$php = '';
		foreach ( $config as $name => $value ) {
			$php .= 'define( ' . var_export( $name, true ) . ', ' . var_export( $value, true ) . " );\n";
		}
		return $php;
	}

	public static function start() {
		self::$dir = sys_get_temp_dir() . '/varnish-edge-test-' . getmypid() . '-' . bin2hex( random_bytes( 3 ) );
		mkdir( self::$dir, 0777, true );
		self::start_watchdog();
		// Stop last: WordPress registers its own shutdown work later and still needs the database.
		register_shutdown_function(
			static function () {
				register_shutdown_function( array( self::class, 'stop' ) );
			}
		);

		// MariaDB with its own datadir and socket, no TCP.
		self::$socket = self::$dir . '/mysql.sock';
		$datadir      = self::$dir . '/db';
		$user         = posix_getpwuid( posix_geteuid() )['name'];
		self::run( 'mariadb-install-db --no-defaults --auth-root-authentication-method=normal --skip-test-db --user=' . escapeshellarg( $user ) . ' --datadir=' . escapeshellarg( $datadir ) . ' > ' . escapeshellarg( self::$dir . '/install-db.log' ) );
		// The project's mariadbd launcher (its fixed flags), with a test's small buffers and no durability.
		self::spawn( 'mariadb', array( dirname( __DIR__, 3 ) . '/stack/launch/mariadbd.sh', $datadir, self::$socket, self::$dir . '/mysql.pid', '--skip-networking', '--user=' . $user, '--innodb-buffer-pool-size=64M', '--innodb-log-file-size=16M', '--innodb-flush-log-at-trx-commit=0' ) );
		self::wait_for( 'mariadb', static function () {
			return file_exists( self::$socket ) && @mysqli_connect( 'localhost', 'root', '', '', 0, self::$socket );
		} );
		$db = mysqli_connect( 'localhost', 'root', '', '', 0, self::$socket );
		mysqli_query( $db, 'CREATE DATABASE wordpress CHARACTER SET utf8mb4' );
		mysqli_close( $db );

		// WordPress: Debian's package copied (its entry points resolve paths from __DIR__, and its
		// themes come along), with our own wp-config.php and the plugin linked in.
		self::$wp = self::$dir . '/wordpress';
		$source = self::wp_source();
		if ( ! is_file( $source . '/wp-settings.php' ) ) {
			throw new RuntimeException( "no WordPress tree at WP_SOURCE=$source" );
		}
		// The stack's copier: Debian's relative links to underscore, getID3... become files.
		self::run( escapeshellarg( dirname( __DIR__, 3 ) . '/stack/copy-wordpress.sh' ) . ' ' . escapeshellarg( $source ) . ' ' . escapeshellarg( self::$wp ) );
		foreach ( array( 'plugins', 'themes', 'uploads' ) as $sub ) {
			if ( ! is_dir( self::$wp . "/wp-content/$sub" ) ) {
				mkdir( self::$wp . "/wp-content/$sub", 0777, true );
			}
		}
		symlink( self::plugin_dir(), self::$wp . '/wp-content/plugins/varnish-edge' );

		list( self::$wp_port, self::$receiver_port ) = self::free_ports( 2 );
		self::$receiver_log     = self::$dir . '/webhooks.jsonl';
		self::$receiver_control = self::$dir . '/receiver-status';
		touch( self::$receiver_log );

		$php = "<?php\n" . self::defines( self::site_config( 'wordpress', self::$dir . '/debug.log' ) );
		// Optional constants for tests of the wp-config override (read from a file next to the config).
		$php .= "if ( is_file( __DIR__ . '/constants.php' ) ) { require __DIR__ . '/constants.php'; }\n";
		// The test site, or (VARNISH_EDGE_TEST_MULTISITE set, see Multisite.php) a subdirectory
		// multisite network in the same database under the table prefix ms_.
		$php .= "\$ve_multisite = getenv( 'VARNISH_EDGE_TEST_MULTISITE' );\n";
		$php .= "if ( \$ve_multisite ) {\n\t\$table_prefix = 'ms_';\n";
		$php .= "\tif ( 'network' === \$ve_multisite ) {\n";
		foreach ( Multisite::constants() as $name => $value ) {
			$php .= "\t\tdefine( " . var_export( $name, true ) . ', ' . var_export( $value, true ) . " );\n";
		}
		$php .= "\t}\n} else {\n\t\$table_prefix = 'wp_';\n";
		$php .= "\tdefine( 'WP_HOME', " . var_export( self::home(), true ) . " );\n\tdefine( 'WP_SITEURL', " . var_export( self::home(), true ) . " );\n}\n";
		$php .= "if ( ! defined( 'ABSPATH' ) ) { define( 'ABSPATH', __DIR__ . '/' ); }\nrequire_once ABSPATH . 'wp-settings.php';\n";
		file_put_contents( self::$wp . '/wp-config.php', $php );

		self::start_receiver();
		self::spawn( 'wordpress', array( PHP_BINARY, '-S', '127.0.0.1:' . self::$wp_port, '-t', self::$wp, __DIR__ . '/router.php' ), array( 'PHP_CLI_SERVER_WORKERS' => '4' ) );
		self::wait_for( 'php -S', static function () {
			return self::port_open( self::$wp_port );
		} );

		self::run( escapeshellarg( PHP_BINARY ) . ' ' . escapeshellarg( __DIR__ . '/install.php' ) . ' ' . escapeshellarg( self::$wp ) . ' ' . escapeshellarg( self::purger_url() ) . ' ' . escapeshellarg( self::SECRET ) . ' ' . escapeshellarg( self::NS ) );
	}

	/** Answer every webhook only after this many seconds. */
	public static function receiver_delay( $seconds ) {
		file_put_contents( self::$receiver_control, 'delay ' . (int) $seconds );
	}

	/**
	 * Start php-fpm serving the test site on a unix socket (for fastcgi_finish_request tests).
	 *
	 * @return string Socket path.
	 */
	public static function start_fpm() {
		$socket = self::$dir . '/fpm.sock';
		if ( isset( self::$procs['php-fpm'] ) ) {
			return $socket;
		}
		$fpm = trim( (string) shell_exec( 'command -v php-fpm8.2 || command -v php-fpm || ls /usr/sbin/php-fpm* 2>/dev/null | head -1' ) );
		if ( '' === $fpm ) {
			throw new RuntimeException( 'php-fpm is not installed' );
		}
		$conf = self::$dir . '/php-fpm.conf';
		file_put_contents(
			$conf,
			"[global]\nerror_log = " . self::$dir . "/php-fpm.log\ndaemonize = no\n\n[www]\nlisten = $socket\npm = static\npm.max_children = 2\nclear_env = no\ncatch_workers_output = yes\n"
		);
		self::spawn( 'php-fpm', array( $fpm, '--nodaemonize', '--fpm-config', $conf, '-R' ) );
		self::wait_for( 'php-fpm', static function () use ( $socket ) {
			return file_exists( $socket );
		} );
		return $socket;
	}

	/**
	 * A second, clean WordPress in the same run, without the plugin: a copy of WP_SOURCE with its
	 * own database (`wordpress_clean`), its own `php -S` and debug log, for installing the plugin as
	 * a site owner does (DistInstallTest). WordPress writes to its own wp-content (FS_METHOD direct),
	 * as plugin uploads need. Started on first use; stopped and removed with everything else.
	 *
	 * @return array{dir:string,url:string,port:int,db:string,debug_log:string} The site.
	 */
	public static function clean_site() {
		if ( null !== self::$clean ) {
			return self::$clean;
		}
		$site = array(
			'dir'       => self::$dir . '/clean',
			'port'      => self::free_ports( 1 )[0],
			'db'        => 'wordpress_clean',
			'debug_log' => self::$dir . '/clean-debug.log',
		);
		$site['url'] = 'http://127.0.0.1:' . $site['port'];
		$db          = mysqli_connect( 'localhost', 'root', '', '', 0, self::$socket );
		mysqli_query( $db, 'CREATE DATABASE ' . $site['db'] . ' CHARACTER SET utf8mb4' );
		mysqli_close( $db );
		self::run( escapeshellarg( dirname( __DIR__, 3 ) . '/stack/copy-wordpress.sh' ) . ' ' . escapeshellarg( self::wp_source() ) . ' ' . escapeshellarg( $site['dir'] ) );
		if ( file_exists( $site['dir'] . '/wp-content/plugins/varnish-edge' ) ) {
			throw new RuntimeException( 'the WordPress tree already holds wp-content/plugins/varnish-edge: not a clean site' );
		}
		$config = array_merge( self::site_config( $site['db'], $site['debug_log'] ), array( 'FS_METHOD' => 'direct' ) );
		$php    = "<?php\n" . self::defines( $config ) . "\$table_prefix = 'wp_';\n";
		$php   .= "if ( ! defined( 'ABSPATH' ) ) { define( 'ABSPATH', __DIR__ . '/' ); }\nrequire_once ABSPATH . 'wp-settings.php';\n";
		file_put_contents( $site['dir'] . '/wp-config.php', $php );
		self::spawn( 'clean-wordpress', array( PHP_BINARY, '-S', '127.0.0.1:' . $site['port'], '-t', $site['dir'], __DIR__ . '/router.php' ), array( 'PHP_CLI_SERVER_WORKERS' => '4' ) );
		self::wait_for( 'php -S (clean site)', static function () use ( $site ) {
			return self::port_open( $site['port'] );
		} );
		self::run( escapeshellarg( PHP_BINARY ) . ' ' . escapeshellarg( __DIR__ . '/install-clean.php' ) . ' ' . escapeshellarg( $site['dir'] ) . ' ' . escapeshellarg( $site['url'] ) );
		self::$clean = $site;
		return $site;
	}

	public static function start_receiver() {
		if ( isset( self::$procs['receiver'] ) ) {
			return;
		}
		self::spawn(
			'receiver',
			array( PHP_BINARY, '-S', '127.0.0.1:' . self::$receiver_port, __DIR__ . '/receiver.php' ),
			array(
				'RECEIVER_LOG'     => self::$receiver_log,
				'RECEIVER_SECRETS' => self::SECRET,
				'RECEIVER_CONTROL' => self::$receiver_control,
			)
		);
		self::wait_for( 'receiver', static function () {
			return self::port_open( self::$receiver_port );
		} );
	}

	public static function stop_receiver() {
		if ( ! isset( self::$procs['receiver'] ) ) {
			return;
		}
		self::terminate( 'receiver' );
		self::wait_for( 'receiver to stop', static function () {
			return ! self::port_open( self::$receiver_port );
		} );
	}

	/** Raw receiver control: `max-bytes N`, `refuse-tag TAG CODE`, `delay N`, a status code, or '0'. */
	public static function receiver_control( $command ) {
		file_put_contents( self::$receiver_control, (string) $command );
	}

	/** Answer every webhook with this HTTP status (0 = normal). */
	public static function receiver_status( $code ) {
		file_put_contents( self::$receiver_control, (string) (int) $code );
	}

	private static function terminate( $name ) {
		$proc   = self::$procs[ $name ];
		$status = proc_get_status( $proc );
		if ( $status['running'] ) {
			posix_kill( -$status['pid'], SIGTERM );
		}
		$until = microtime( true ) + 10;
		while ( proc_get_status( $proc )['running'] && microtime( true ) < $until ) {
			usleep( 50000 );
		}
		if ( proc_get_status( $proc )['running'] ) {
			posix_kill( -proc_get_status( $proc )['pid'], SIGKILL );
		}
		proc_close( $proc );
		unset( self::$procs[ $name ] );
		self::write_pgids();
	}

	public static function stop() {
		foreach ( array_keys( self::$procs ) as $name ) {
			self::terminate( $name );
		}
		if ( self::$dir && is_dir( self::$dir ) && ! getenv( 'VARNISH_EDGE_KEEP_TMP' ) ) {
			exec( 'rm -rf ' . escapeshellarg( self::$dir ) );
		}
	}

	/* --------------------------------------------------------------- webhooks */

	/** Every logged webhook request. */
	public static function webhooks() {
		clearstatcache();
		$out = array();
		foreach ( file( self::$receiver_log, FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES ) as $line ) {
			$out[] = json_decode( $line, true );
		}
		return $out;
	}

	public static function clear_webhooks() {
		file_put_contents( self::$receiver_log, '' );
	}

	/** Events of accepted (202) webhooks. */
	public static function accepted_events() {
		$events = array();
		foreach ( self::webhooks() as $hook ) {
			if ( 202 === $hook['status'] ) {
				foreach ( $hook['body']['events'] as $event ) {
					$events[] = $event;
				}
			}
		}
		return $events;
	}

	/* ------------------------------------------------------------------- HTTP */

	/**
	 * Anonymous GET of a site path. Returns status, headers (lower-case name => list), body.
	 */
	public static function fetch( $path, array $cookies = array() ) {
		$url = preg_match( '#^https?://#', $path ) ? $path : self::home() . $path;
		$ch  = curl_init( $url );
		$headers = array();
		curl_setopt_array(
			$ch,
			array(
				CURLOPT_RETURNTRANSFER => true,
				CURLOPT_TIMEOUT        => 60,
				CURLOPT_HEADERFUNCTION => static function ( $ch, $line ) use ( &$headers ) {
					if ( false !== strpos( $line, ':' ) ) {
						list( $name, $value )            = explode( ':', $line, 2 );
						$headers[ strtolower( trim( $name ) ) ][] = trim( $value );
					}
					return strlen( $line );
				},
				CURLOPT_COOKIE         => implode( '; ', array_map( static function ( $k, $v ) {
					return $k . '=' . $v;
				}, array_keys( $cookies ), $cookies ) ),
			)
		);
		$body   = curl_exec( $ch );
		$status = (int) curl_getinfo( $ch, CURLINFO_RESPONSE_CODE );
		curl_close( $ch );
		return array( 'status' => $status, 'headers' => $headers, 'body' => (string) $body );
	}

	/** Keys of a response. */
	public static function keys_of( array $response ) {
		$keys = array();
		foreach ( $response['headers']['xkey'] ?? array() as $line ) {
			foreach ( preg_split( '/\s+/', trim( $line ) ) as $key ) {
				if ( '' !== $key ) {
					$keys[] = $key;
				}
			}
		}
		return $keys;
	}
}

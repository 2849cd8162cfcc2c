<?php
/**
 * A real subdirectory multisite network for the multisite tests, without a second server: the
 * test WordPress's wp-config.php switches to the table prefix `ms_` and the multisite constants
 * when VARNISH_EDGE_TEST_MULTISITE is set (`install` while converting, `network` after), in the
 * same MariaDB database. Scenarios run as PHP CLI processes on that network (one per call),
 * loaded as a request to `http://ms.test<path>`; they deliver to the same webhook receiver.
 *
 * Network: main site `http://ms.test/` (blog 1), sub-site `http://ms.test/sub/` (blog 2), the
 * super admin `admin` (user 1) and `subadmin`, administrator of the sub-site only.
 */
final class Multisite {

	const DOMAIN = 'ms.test';

	/** @var array|null What the installer reported (blog and user ids). */
	private static $installed = null;

	/** The multisite constants of wp-config.php. */
	public static function constants() {
		return array(
			'MULTISITE'            => true,
			'SUBDOMAIN_INSTALL'    => false,
			'DOMAIN_CURRENT_SITE'  => self::DOMAIN,
			'PATH_CURRENT_SITE'    => '/',
			'SITE_ID_CURRENT_SITE' => 1,
			'BLOG_ID_CURRENT_SITE' => 1,
		);
	}

	/**
	 * Install the network once per test run.
	 *
	 * @return array{sub:int,subadmin:int}
	 */
	public static function install() {
		if ( null === self::$installed ) {
			$script = __DIR__ . '/install-multisite.php';
			$args   = ' ' . escapeshellarg( Environment::$wp ) . ' ' . escapeshellarg( Environment::purger_url() ) . ' ' . escapeshellarg( Environment::SECRET );
			foreach ( array( 'install', 'network' ) as $phase ) {
				$out = shell_exec( 'VARNISH_EDGE_TEST_MULTISITE=' . $phase . ' ' . escapeshellarg( PHP_BINARY ) . ' ' . escapeshellarg( $script ) . ' ' . $phase . $args . ' 2>&1' );
				$res = self::decode( (string) $out, 'installer phase ' . $phase );
			}
			self::$installed = $res;
		}
		return self::$installed;
	}

	/**
	 * Run PHP code inside a request to `http://ms.test<path>` and return what it returns.
	 *
	 * @param string $path Request path (`/` main site, `/sub/` the sub-site).
	 * @param string $code PHP statements ending in `return …;` ($ve array holds the installer's ids).
	 * @return mixed
	 */
	public static function run( $path, $code ) {
		$ids    = self::install();
		$script = Environment::$dir . '/multisite-' . bin2hex( random_bytes( 4 ) ) . '.php';
		file_put_contents(
			$script,
			"<?php\n"
			. '$_SERVER["HTTP_HOST"] = ' . var_export( self::DOMAIN, true ) . ";\n"
			. '$_SERVER["REQUEST_URI"] = ' . var_export( $path, true ) . ";\n"
			. '$_SERVER["SERVER_NAME"] = ' . var_export( self::DOMAIN, true ) . ";\n"
			. 'require ' . var_export( Environment::$wp . '/wp-load.php', true ) . ";\n"
			. "require_once ABSPATH . 'wp-admin/includes/admin.php';\n"
			. '$ve = ' . var_export( $ids, true ) . ";\n"
			. '$ve_result = ( static function () use ( $ve ) {' . "\n" . $code . "\n} )();\n"
			. 'echo "\n@@VE@@" . json_encode( $ve_result );' . "\n"
		);
		try {
			$out = shell_exec( 'VARNISH_EDGE_TEST_MULTISITE=network ' . escapeshellarg( PHP_BINARY ) . ' ' . escapeshellarg( $script ) . ' 2>&1' );
		} finally {
			unlink( $script );
		}
		return self::decode( (string) $out, 'scenario on ' . $path );
	}

	private static function decode( $out, $what ) {
		$at = strrpos( $out, '@@VE@@' );
		if ( false === $at ) {
			throw new RuntimeException( "multisite $what failed:\n" . $out );
		}
		return json_decode( substr( $out, $at + 6 ), true );
	}
}

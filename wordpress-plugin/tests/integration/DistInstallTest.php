<?php
/**
 * The plugin as a user installs it: `make dist`'s zip (scripts/dist.sh) holds the runtime files
 * only, and headless Chromium uploads it into a clean WordPress that never had the plugin
 * (Environment::clean_site()) through Plugins → Add New → Upload Plugin, activates it, opens its
 * settings page and Site Health, configures it, and edits a post; the signed event reaches the
 * receiver. VARNISH_EDGE_DIST_ZIP=<zip> tests that file instead of a fresh build.
 */
class DistInstallTest extends VE_TestCase {

	const NS       = 'zip';
	const POST_ID  = 1; // "Hello world!" of a fresh install.
	const TITLE    = 'Hello from the zip';
	const IN_ZIP   = 'varnish-edge/';
	const CORE_API = 'An unexpected error occurred. Something may be wrong with WordPress.org';

	/** @var string|null The zip under test. */
	private static $zip;

	private static function root() {
		return dirname( __DIR__, 3 );
	}

	/** Builds the zip once per run with scripts/dist.sh, into the test directory. */
	private static function zip() {
		if ( null === self::$zip ) {
			$given = getenv( 'VARNISH_EDGE_DIST_ZIP' );
			if ( is_string( $given ) && '' !== $given ) {
				self::$zip = $given;
			} else {
				$out = Environment::$dir . '/dist';
				exec( escapeshellarg( self::root() . '/scripts/dist.sh' ) . ' ' . escapeshellarg( $out ) . ' 2>&1', $lines, $rc );
				if ( 0 !== $rc ) {
					throw new RuntimeException( "scripts/dist.sh failed ($rc):\n" . implode( "\n", $lines ) );
				}
				$built     = glob( $out . '/varnish-edge-*.zip' );
				self::$zip = (string) reset( $built );
			}
		}
		return self::$zip;
	}

	/**
	 * Entries of a zip: name => sha1 of the contents (folders: null), read with Python's zipfile
	 * (this PHP may lack the zip extension; WordPress then unpacks with its bundled PclZip).
	 */
	private static function zip_entries( $zip ) {
		$py   = 'import hashlib, json, sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); print(json.dumps({i.filename: None if i.is_dir() else hashlib.sha1(z.read(i)).hexdigest() for i in z.infolist()}))';
		$json = shell_exec( 'python3 -c ' . escapeshellarg( $py ) . ' ' . escapeshellarg( $zip ) );
		$out  = json_decode( (string) $json, true );
		if ( ! is_array( $out ) ) {
			throw new RuntimeException( "cannot read $zip" );
		}
		return $out;
	}

	/** Every file under $dir, relative path => sha1 of the contents; symlinks are reported as such. */
	private static function tree( $dir ) {
		$out = array();
		$it  = new RecursiveIteratorIterator( new RecursiveDirectoryIterator( $dir, FilesystemIterator::SKIP_DOTS ) );
		foreach ( $it as $file ) {
			$rel         = substr( $file->getPathname(), strlen( $dir ) + 1 );
			$out[ $rel ] = $file->isLink() ? 'symlink' : sha1_file( $file->getPathname() );
		}
		ksort( $out );
		return $out;
	}

	public function test_dist_zip_holds_one_folder_with_the_plugins_files_only() {
		$zip = self::zip();
		$this->assertFileExists( $zip );
		$this->assertMatchesRegularExpression( '/^varnish-edge-\d+\.\d+\.\d+\.zip$/', basename( $zip ) );
		$this->assertStringContainsString( '-' . VarnishEdge\VERSION . '.zip', basename( $zip ), 'named after the plugin header version' );

		$entries = self::zip_entries( $zip );
		foreach ( array_keys( $entries ) as $name ) {
			$this->assertStringStartsWith( self::IN_ZIP, $name, 'one top-level folder' );
			$this->assertDoesNotMatchRegularExpression( '#(^|/)(\.|tests?/|node_modules/|vendor/|phpcs|phpunit|package(-lock)?\.json|composer)#', substr( $name, strlen( self::IN_ZIP ) ), "$name is not a runtime file" );
		}
		$files = array();
		foreach ( $entries as $name => $data ) {
			if ( null !== $data ) {
				$files[ substr( $name, strlen( self::IN_ZIP ) ) ] = $data;
			}
		}
		ksort( $files );
		$this->assertSame( self::tree( Environment::plugin_dir() ), $files, 'the zip holds exactly the plugin folder, byte for byte' );
		$this->assertArrayHasKey( 'readme.txt', $files );
		$this->assertArrayHasKey( 'includes/class-plugin.php', $files );
	}

	public function test_dist_refuses_a_tree_with_files_that_are_not_the_plugins() {
		$copy = Environment::$dir . '/dist-refusal/varnish-edge';
		exec( 'mkdir -p ' . escapeshellarg( dirname( $copy ) ) . ' && cp -r ' . escapeshellarg( Environment::plugin_dir() ) . ' ' . escapeshellarg( $copy ) );
		mkdir( $copy . '/tests' );
		file_put_contents( $copy . '/tests/ExampleTest.php', "<?php\n" );
		file_put_contents( $copy . '/phpunit.xml.dist', "<phpunit/>\n" );
		$out = dirname( $copy ) . '/out';
		exec( 'DIST_SOURCE=' . escapeshellarg( $copy ) . ' ' . escapeshellarg( self::root() . '/scripts/dist.sh' ) . ' ' . escapeshellarg( $out ) . ' 2>&1', $lines, $rc );
		$said = implode( "\n", $lines );
		$this->assertNotSame( 0, $rc, $said );
		$this->assertStringContainsString( 'tests/ExampleTest.php', $said );
		$this->assertStringContainsString( 'phpunit.xml.dist', $said );
		$this->assertSame( array(), glob( $out . '/*.zip' ), 'nothing built' );
	}

	public function test_upload_activate_configure_and_edit_in_a_clean_wordpress() {
		$dir = dirname( __DIR__ ) . '/browser';
		$this->assertDirectoryExists( $dir . '/node_modules/playwright-core', 'run `npm ci` in tests/browser (scripts/suites/plugin.sh does)' );
		$zip       = self::zip();
		$site      = Environment::clean_site();
		$installed = $site['dir'] . '/wp-content/plugins/varnish-edge';
		$this->assertFileDoesNotExist( $installed, 'the clean site has no copy of the plugin' );

		$env = array(
			'WP_URL'     => $site['url'],
			'WP_USER'    => 'admin',
			'WP_PASS'    => 'admin-password',
			'ZIP'        => $zip,
			'PURGER_URL' => Environment::purger_url(),
			'SECRET'     => Environment::SECRET,
			'NAMESPACE'  => self::NS,
			'POST_ID'    => (string) self::POST_ID,
			'NEW_TITLE'  => self::TITLE,
		);
		$cmd = 'cd ' . escapeshellarg( $dir ) . ' && env';
		foreach ( $env as $name => $value ) {
			$cmd .= ' ' . $name . '=' . escapeshellarg( $value );
		}
		exec( $cmd . ' timeout 300 node install-from-zip.mjs 2>&1', $out, $rc );
		$said = implode( "\n", $out );
		$json = json_decode( (string) end( $out ), true );
		if ( 0 !== $rc && is_file( $site['debug_log'] ) ) {
			$said .= "\nthe clean site's PHP log, without core's deprecations and api.wordpress.org warnings:\n" . implode( "\n", preg_grep( '/PHP Deprecated:|' . preg_quote( self::CORE_API, '/' ) . '/', file( $site['debug_log'], FILE_IGNORE_NEW_LINES ), PREG_GREP_INVERT ) );
		}
		$this->assertSame( 0, $rc, $said );
		$this->assertIsArray( $json, $said );
		$this->assertSame( array( 'logged in', 'uploaded', 'activated', 'configured', 'connection tested', 'site health', 'site health info', 'post updated' ), $json['steps'], $said );
		$this->assertSame( array(), $json['problems'] );
		// Offsite requests (answered 204 by the browser, no internet here): only the Gravatar images
		// WordPress itself shows in the admin bar and lists; nothing the plugin's pages load.
		$this->assertSame( array(), preg_grep( '#^https?://(secure|[0-9])\.gravatar\.com/avatar/[0-9a-f]*\?#', $json['offsite'], PREG_GREP_INVERT ), 'requests to other origins' );
		$this->assertSame( 0, $json['listed_before'], 'not installed before the upload' );
		$this->assertStringContainsString( 'Plugin installed successfully.', $json['install_page'] );
		$this->assertStringContainsString( 'Plugin activated.', $json['activated_notice'] );
		$this->assertMatchesRegularExpression( '/\bactive\b/', $json['row_class'] );
		$this->assertStringContainsString( 'Version ' . VarnishEdge\VERSION, $json['row_text'] );
		$this->assertSame( 1, $json['menu_entries'], 'Settings → Varnish Edge' );
		$this->assertSame( 'Varnish Edge', $json['settings_heading'] );
		$this->assertSame( Environment::purger_url(), $json['purger_url_after_save'] );
		$this->assertSame( self::NS, $json['namespace_after_save'] );
		$this->assertSame( '', $json['secret_field_after_save'], 'the secret field is empty after the save' );
		$this->assertStringStartsWith( 'Set: 1 secret (not shown). Type a new secret to replace it', $json['secret_state'] );
		$this->assertFalse( $json['secret_in_page'], 'the secret is nowhere in the page' );
		$this->assertStringContainsString( 'Connection OK', $json['test_notice'] );
		$this->assertSame( 'health-check-issues-good', $json['health_result_in'], 'Site Health: the delivery test passes' );
		$this->assertStringStartsWith( 'No change has been sent to the edge yet.', $json['health_detail'], 'before the first edit' );
		$this->assertStringContainsString( 'Varnish Edge', $json['info_active_plugins'], 'Site Health → Info lists the plugin as active' );
		$this->assertMatchesRegularExpression( '/Total installation size\s*[\d.]+\s*[KMG]?B/', $json['info_total_size'], 'the directory sizes arrived' );

		// WordPress unpacked the zip into real files: the folder, not a link, with the zip's bytes.
		$this->assertDirectoryExists( $installed );
		$this->assertFalse( is_link( $installed ), 'a real folder, not the symlink the other tests use' );
		$from_zip = array();
		foreach ( self::zip_entries( $zip ) as $name => $data ) {
			if ( null !== $data ) {
				$from_zip[ substr( $name, strlen( self::IN_ZIP ) ) ] = $data;
			}
		}
		ksort( $from_zip );
		$this->assertSame( $from_zip, self::tree( $installed ) );

		// Activation went through WordPress (its hook created the outbox table), in the clean database.
		$db = mysqli_connect( 'localhost', 'root', '', $site['db'], 0, Environment::$socket );
		$this->assertSame( array( 'varnish-edge/varnish-edge.php' ), unserialize( mysqli_query( $db, "SELECT option_value FROM wp_options WHERE option_name = 'active_plugins'" )->fetch_row()[0] ) );
		$this->assertSame( 1, mysqli_query( $db, "SHOW TABLES LIKE 'wp_varnish_edge_outbox'" )->num_rows );
		mysqli_close( $db );

		// The clean site's own webhooks: the connection test and the edit, signed and accepted.
		$host  = (string) wp_parse_url( $site['url'], PHP_URL_HOST ) . ':' . (string) wp_parse_url( $site['url'], PHP_URL_PORT );
		$hooks = array_values(
			array_filter(
				Environment::webhooks(),
				static function ( $hook ) use ( $host ) {
					return $host === ( $hook['body']['site'] ?? '' );
				}
			)
		);
		$this->assertNotEmpty( $hooks, 'webhooks from the clean site' );
		$kinds = array();
		foreach ( $hooks as $hook ) {
			$this->assertTrue( $hook['signature_ok'], 'signed with the secret typed into the settings page' );
			$this->assertSame( 202, $hook['status'], wp_json_encode( $hook ) );
			foreach ( $hook['body']['events'] as $event ) {
				$kinds[ $event['kind'] ][] = $event;
			}
		}
		$tags = array_merge( ...array_column( $kinds['tags'] ?? array(), 'tags' ) );
		$this->assertContains( self::NS . '-connection-test', $tags, 'Test connection' );
		$this->assertContains( self::NS . '-p-' . self::POST_ID, $tags, 'the Quick Edit purged the post' );
		$this->assertContains( self::NS . '-pl-' . self::POST_ID, $tags, 'and the listings showing its title' );
		$urls = array_merge( ...array_column( $kinds['urls'] ?? array(), 'urls' ) );
		$this->assertNotEmpty( preg_grep( '#^' . preg_quote( $site['url'], '#' ) . '/.*hello-world/$#', $urls ), 'the post URL: ' . implode( ' ', $urls ) );

		// Anonymous pages of the clean site carry the installed plugin's keys.
		$home = Environment::fetch( $site['url'] . '/' );
		$this->assertSame( 200, $home['status'] );
		$this->assertContains( self::NS . '-home', Environment::keys_of( $home ) );

		$this->assert_debug_log_clean( $site['debug_log'] );
	}

	/**
	 * The clean site's PHP log after the walk: no warning, notice or error, and nothing at all from
	 * the plugin. Tolerated, all from WordPress core: its deprecations under this PHP (6.1's Requests
	 * library on PHP 8.2), and the one warning core raises when api.wordpress.org is unreachable
	 * (plugins_api(), the update and checksum checks: this machine has no route to wordpress.org).
	 */
	private function assert_debug_log_clean( $file ) {
		$log = is_file( $file ) ? (string) file_get_contents( $file ) : '';
		$bad = array();
		foreach ( preg_split( '/^(?=\[[^\]]+\] )/m', $log, -1, PREG_SPLIT_NO_EMPTY ) as $entry ) {
			$ours = false !== strpos( $entry, 'plugins/varnish-edge' ) || false !== strpos( $entry, 'VarnishEdge' );
			$core = (bool) preg_match( '# in \S+/(wp-includes|wp-admin)/\S+\.php on line \d+\s*$#', $entry );
			// The api.wordpress.org warning: WordPress 6.7+ raises it with wp_trigger_error(), which
			// names the caller first ("plugins_api(): An unexpected error…").
			if ( $ours || ! $core ) {
				$bad[] = $entry;
			} elseif ( preg_match( '/^\[[^\]]+\] PHP Deprecated:/', $entry ) ) {
				continue;
			} elseif ( ! preg_match( '/^\[[^\]]+\] PHP Warning:  (?:[a-z_]+\(\): )?' . preg_quote( self::CORE_API, '/' ) . '/', $entry ) ) {
				$bad[] = $entry;
			}
		}
		$this->assertSame( array(), $bad, "the clean site's debug log ($file)" );
	}
}

<?php
/**
 * The autoloader's map (VarnishEdge\CLASS_FOLDERS in varnish-edge.php) and includes/ agree: every
 * class it names loads from includes/<folder>/class-<name>.php, every class file is named there,
 * and the composition root (class-plugin.php) is the only class file at the top of includes/.
 */
class LayoutTest extends \PHPUnit\Framework\TestCase {

	private static function includes() {
		return realpath( dirname( __DIR__, 2 ) . '/varnish-edge/includes' );
	}

	private static function file_of( $class ) {
		return 'class-' . str_replace( '_', '-', strtolower( $class ) ) . '.php';
	}

	public function test_every_mapped_class_loads_from_its_folder() {
		$expected = array( 'Plugin' => self::includes() . '/class-plugin.php' );
		foreach ( VarnishEdge\CLASS_FOLDERS as $folder => $classes ) {
			foreach ( $classes as $class ) {
				$this->assertArrayNotHasKey( $class, $expected, "$class is mapped twice" );
				$expected[ $class ] = self::includes() . '/' . $folder . '/' . self::file_of( $class );
			}
		}
		foreach ( $expected as $class => $file ) {
			$name = 'VarnishEdge\\' . $class;
			$this->assertTrue( class_exists( $name ) || interface_exists( $name ), "$name does not load" );
			$this->assertSame( $file, realpath( ( new ReflectionClass( $name ) )->getFileName() ), $name );
		}
	}

	public function test_every_class_file_is_in_the_map() {
		$mapped = array( 'class-plugin.php' );
		foreach ( VarnishEdge\CLASS_FOLDERS as $folder => $classes ) {
			foreach ( $classes as $class ) {
				$mapped[] = $folder . '/' . self::file_of( $class );
			}
		}
		$found = array();
		foreach ( glob( self::includes() . '/{,*/}*', GLOB_BRACE ) as $path ) {
			if ( is_file( $path ) ) {
				$found[] = substr( $path, strlen( self::includes() ) + 1 );
			}
		}
		sort( $mapped );
		sort( $found );
		$this->assertSame( $mapped, $found );
		$folders = array_map( 'basename', glob( self::includes() . '/*', GLOB_ONLYDIR ) );
		$this->assertSame( array_keys( VarnishEdge\CLASS_FOLDERS ), array_values( array_intersect( array_keys( VarnishEdge\CLASS_FOLDERS ), $folders ) ) );
		$this->assertCount( count( VarnishEdge\CLASS_FOLDERS ), $folders, 'a folder of includes/ the map does not name' );
	}
}
